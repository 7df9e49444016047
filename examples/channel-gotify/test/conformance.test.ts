// The shared channel conformance suite (@talon/testing) for the Gotify adapter, against the fake Gotify server.
import { channelConformance } from '@talon/testing';
import { startGotifyFake, type FakeMessage } from './fake-gotify.ts';
import { CONFIG, DIRECT_APPS, dmApp, groupApp, MODULES } from './helpers.ts';

const replyTo = (m: FakeMessage) => (m.extras?.['talon::reply'] as { chat_id?: string } | undefined)?.chat_id;

channelConformance({
  name: 'channel-gotify',
  channel: 'gotify',
  only: MODULES,
  config: CONFIG,
  limits: { maxLength: 4000, unit: 'chars' },
  async harness() {
    const gotify = await startGotifyFake();
    return {
      configure: { url: gotify.url, token: gotify.clientToken, app_token: gotify.bot.token, direct_apps: DIRECT_APPS },
      badCredentials: { token: 'CnotTheClientToken' },
      dm: (n, text) => void gotify.push(dmApp(n), text, ''),
      group: (n, text, { mentioned }) => void gotify.push(groupApp(n), mentioned ? `@talon ${text}` : text, ''),
      received: (target) => {
        const chat = String('dm' in target ? dmApp(target.dm) : groupApp(target.group));
        return gotify
          .posted()
          .filter((m) => replyTo(m) === chat)
          .map((m) => m.message);
      },
      dmChat: (n) => String(dmApp(n)),
      rateLimitOnce: (seconds) => gotify.rateLimitNext(seconds),
      dropConnection: () => gotify.dropStreams(),
      stop: () => gotify.stop(),
    };
  },
});

// The shared channel conformance suite for the Signal adapter, against the fake signal-cli daemon (JSON-RPC + SSE).
import { channelConformance, startSignalFake, type SignalFake } from '@talon/testing';
import { configureFor, dmTexts, groupOf, MODULES, person } from './helpers.ts';

channelConformance({
  name: 'channel-signal',
  channel: 'signal',
  only: MODULES,
  limits: { maxLength: 2_000, unit: 'chars' },
  async harness() {
    // The daemon behind a proxy that wants a bearer token: what bad credentials can be for a daemon with no auth of its own.
    const fake: SignalFake = await startSignalFake({ token: 'proxy-token-for-the-daemon' });
    return {
      configure: configureFor(fake),
      badCredentials: { token: 'refused-by-the-proxy-0000' },
      dm: (n, text) => void fake.dm(person(n), text),
      group: (n, text, { mentioned }) => void fake.group(groupOf(n), person(n), text, { mentionBot: mentioned }),
      received: (target) => ('dm' in target ? dmTexts(fake, target.dm) : fake.sent.filter((s) => s.groupId === groupOf(target.group)).map((s) => s.message)),
      typings: (n) => fake.typings.filter((t) => t.recipient?.includes(person(n)) && !t.stop).length,
      rateLimitOnce: (seconds) => fake.rateLimitNext(seconds),
      dropConnection: () => fake.dropConnections(),
      dmMedia: (n, file, text) => void fake.dm(person(n), text, { attachments: [file] }),
      receivedMedia: ({ dm }) =>
        fake.sent
          .filter((s) => s.recipient?.includes(person(dm)))
          .flatMap((s) => s.attachments.map((a) => ({ mediaType: a.mediaType, name: a.name, data: a.data }))),
      dmChat: (n) => person(n),
      stop: () => fake.stop(),
    };
  },
});

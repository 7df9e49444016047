// The shared channel conformance suite for the Slack adapter, against the Slack fake (Web API + Socket Mode) with the
// real @slack/web-api and @slack/socket-mode.
import { channelConformance, startSlackFake, type SlackFake } from '@talon/testing';
import { MODULES } from './helpers.ts';

// Slack's ids: D… for a direct message (an `im`), C… for a channel.
const dmId = (n: number) => `D0CONF${n}`;
const groupId = (n: number) => `C0CONF${n}`;

channelConformance({
  name: 'channel-slack',
  channel: 'slack',
  only: MODULES,
  limits: { maxLength: 3_000, unit: 'utf16' },
  async harness() {
    // Unacked envelopes come again after 1.5 s, 3 times: a drop's gap (a reconnect within a second) is well inside.
    const slack: SlackFake = await startSlackFake({ ackTimeoutMs: 1_500 });
    return {
      configure: { token: slack.botToken, app_token: slack.appToken, api_url: slack.apiUrl },
      badCredentials: { token: 'xoxb-refused-by-slack' },
      dm: (n, text) => void slack.injectMessage({ channel: dmId(n), channel_type: 'im', text }),
      dmMedia: (n, file, text) =>
        void slack.injectMessage({
          channel: dmId(n),
          channel_type: 'im',
          text,
          files: [{ name: file.name ?? 'file', mimetype: file.mediaType, data: file.data }],
        }),
      // What the bot uploaded into the DM, as the upload flow delivered it to the fake.
      receivedMedia: ({ dm }) => slack.uploads.filter((u) => u.channel === dmId(dm)).map((u) => ({ name: u.name, mediaType: u.mimetype, data: u.data })),
      dmChat: dmId,
      group: (n, text, { mentioned, thread }) => {
        const where = { channel: groupId(n), ...(thread ? { thread_ts: thread } : {}) };
        if (!mentioned) return void slack.injectMessage({ ...where, text });
        // A mention arrives twice, as Slack sends it to an app subscribed to app_mention and message.channels: two
        // envelopes, one message (the same ts), which must make one turn.
        const mention = slack.injectMessage({ ...where, text: `<@${slack.botUserId}> ${text}`, type: 'app_mention' });
        const ts = String((mention.payload.event as { ts: string }).ts);
        slack.injectMessage({ ...where, text: `<@${slack.botUserId}> ${text}`, ts });
      },
      received: (target) =>
        slack.sent
          .filter((m) =>
            'dm' in target ? m.channel === dmId(target.dm) : m.channel === groupId(target.group) && (!target.thread || m.thread_ts === target.thread),
          )
          .map((m) => String(m.text)),
      rateLimitOnce: (seconds) => slack.rateLimitNext('chat.postMessage', seconds),
      // A network drop: every socket cut without a close frame; envelopes sent meanwhile are unacked and come again.
      dropConnection: () => slack.dropConnections(),
      thread: (n) => `1700000000.${String(100 + n).padStart(6, '0')}`,
      stop: () => slack.stop(),
    };
  },
});

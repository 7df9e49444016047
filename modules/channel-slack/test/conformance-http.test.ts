// The shared channel conformance suite for the Slack adapter in HTTP mode: the Slack fake POSTs signed Events API
// requests into the running kernel's route (retrying until a 2xx), replies and uploads go to the fake's Web API.
import { channelConformance, startSlackFake, type SlackFake } from '@talon/testing';
import { EVENTS_PATH } from '../routes/events.ts';
import { MODULES } from './helpers.ts';

const dmId = (n: number) => `D0HCONF${n}`;
const groupId = (n: number) => `C0HCONF${n}`;

channelConformance({
  name: 'channel-slack (http mode)',
  channel: 'slack',
  only: MODULES,
  limits: { maxLength: 3_000, unit: 'utf16' },
  async harness(kernel) {
    const slack: SlackFake = await startSlackFake({ ackTimeoutMs: 1_500 });
    // The kernel starts after the harness: the Request URL is set on the first event, as an app's is once it runs.
    const inject = (message: Parameters<SlackFake['injectMessage']>[0]) => {
      slack.deliverTo(kernel().url + EVENTS_PATH);
      return slack.injectMessage(message);
    };
    return {
      configure: { mode: 'http', token: slack.botToken, signing_secret: slack.signingSecret, api_url: slack.apiUrl },
      badCredentials: { token: 'xoxb-refused-by-slack' },
      dm: (n, text) => void inject({ channel: dmId(n), channel_type: 'im', text }),
      dmMedia: (n, file, text) =>
        void inject({ channel: dmId(n), channel_type: 'im', text, files: [{ name: file.name ?? 'file', mimetype: file.mediaType, data: file.data }] }),
      receivedMedia: ({ dm }) => slack.uploads.filter((u) => u.channel === dmId(dm)).map((u) => ({ name: u.name, mediaType: u.mimetype, data: u.data })),
      dmChat: dmId,
      group: (n, text, { mentioned, thread }) => {
        const where = { channel: groupId(n), ...(thread ? { thread_ts: thread } : {}) };
        if (!mentioned) return void inject({ ...where, text });
        // One mention, two events (app_mention and message.channels) with one ts: one turn.
        const mention = inject({ ...where, text: `<@${slack.botUserId}> ${text}`, type: 'app_mention' });
        inject({ ...where, text: `<@${slack.botUserId}> ${text}`, ts: String((mention.payload.event as { ts: string }).ts) });
      },
      received: (target) =>
        slack.sent
          .filter((m) =>
            'dm' in target ? m.channel === dmId(target.dm) : m.channel === groupId(target.group) && (!target.thread || m.thread_ts === target.thread),
          )
          .map((m) => String(m.text)),
      rateLimitOnce: (seconds) => slack.rateLimitNext('chat.postMessage', seconds),
      // No dropConnection: in HTTP mode nothing stays open to drop; a request not answered 2xx is sent again (http.test.ts).
      thread: (n) => `1700000000.${String(200 + n).padStart(6, '0')}`,
      stop: () => slack.stop(),
    };
  },
});

// The shared channel conformance suite for the Telegram adapter, against the Bot API fake.
import { channelConformance, startTelegramFake, type TelegramFake } from '@talon/testing';
import { MODULES, sentTo } from './helpers.ts';

const from = (id: number) => ({ id, is_bot: false, first_name: 'Ann' });
// DMs and groups get chat ids apart (a group's id is negative in the Bot API).
const dmId = (n: number) => 900 + n;
const groupId = (n: number) => -100900 - n;

channelConformance({
  name: 'channel-telegram',
  channel: 'telegram',
  only: MODULES,
  limits: { maxLength: 4096, unit: 'utf16' },
  async harness() {
    const tg: TelegramFake = await startTelegramFake();
    const mention = `@${tg.bot.username} `;
    return {
      configure: { token: tg.token, api_url: tg.apiRoot },
      badCredentials: { token: '999:refused-token' },
      dm: (n, text) => void tg.injectMessage({ chat: { id: dmId(n), type: 'private' }, from: from(dmId(n)), text }),
      group: (n, text, { mentioned, thread }) =>
        void tg.injectMessage({
          chat: { id: groupId(n), type: 'supergroup', title: 'team' },
          from: from(7),
          text: mentioned ? mention + text : text,
          ...(mentioned ? { entities: [{ type: 'mention', offset: 0, length: mention.length - 1 }] } : {}),
          ...(thread ? { message_thread_id: Number(thread) } : {}),
        }),
      received: (target) => {
        const sent = sentTo(tg, 'dm' in target ? dmId(target.dm) : groupId(target.group));
        const inThread = 'thread' in target && target.thread ? sent.filter((m) => m.message_thread_id === Number(target.thread)) : sent;
        return inThread.map((m) => String(m.text));
      },
      typings: (n) => tg.callsOf('sendChatAction').filter((c) => String(c.params.chat_id) === String(dmId(n))).length,
      rateLimitOnce: (seconds) =>
        tg.failNext('sendMessage', { error_code: 429, description: `Too Many Requests: retry after ${seconds}`, parameters: { retry_after: seconds } }),
      thread: (n) => String(70 + n),
      stop: () => tg.stop(),
    };
  },
});

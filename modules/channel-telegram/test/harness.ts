// The platform side of the Telegram adapter's conformance runs: the Bot API fake, polled or delivering to the webhook.
import { startTelegramFake, waitFor, type AgentTestKernel, type ChannelHarness, type TelegramFake } from '@talon/testing';
import { WEBHOOK_ROUTE } from '../config.ts';
import { sentTo } from './helpers.ts';

const from = (id: number) => ({ id, is_bot: false, first_name: 'Ann' });
// DMs and groups get chat ids apart (a group's id is negative in the Bot API).
const dmId = (n: number) => 900 + n;
const groupId = (n: number) => -100900 - n;

/** With `webhook`, the adapter runs in webhook mode and the fake POSTs each update into the kernel. */
export async function telegramHarness(options: { webhook?: () => AgentTestKernel } = {}): Promise<ChannelHarness> {
  const tg: TelegramFake = await startTelegramFake({ webhookRetryMs: 100 });
  const mention = `@${tg.bot.username} `;
  const kernel = options.webhook;
  return {
    // Read once the kernel runs: in webhook mode Telegram (the fake) is told to POST to the kernel's route.
    get configure() {
      const webhook = kernel ? { mode: 'webhook', webhook_url: kernel().url + WEBHOOK_ROUTE } : {};
      return { token: tg.token, api_url: tg.apiRoot, ...webhook };
    },
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
    dmChat: (n) => String(dmId(n)),
    // Images go as photos (Telegram keeps no name for them), other files as documents.
    dmMedia: (n, file, caption) =>
      void tg.injectMessage({
        chat: { id: dmId(n), type: 'private' },
        from: from(dmId(n)),
        caption,
        ...(file.mediaType.startsWith('image/')
          ? { photo: { content: file.data } }
          : { document: { name: file.name ?? 'file', type: file.mediaType, content: file.data } }),
      }),
    receivedMedia: async ({ dm }) => {
      const files = [];
      for (const m of sentTo(tg, dmId(dm))) {
        const photo = (m.photo as Array<{ file_id: string }> | undefined)?.at(-1);
        const doc = m.document as { file_id: string; file_name?: string; mime_type?: string } | undefined;
        const item = photo ?? doc;
        if (!item) continue;
        // Read back the way a client would: getFile, then the download.
        const info = (await (await fetch(`${tg.apiRoot}/bot${tg.token}/getFile?file_id=${item.file_id}`)).json()) as { result: { file_path: string } };
        const data = Buffer.from(await (await fetch(`${tg.apiRoot}/file/bot${tg.token}/${info.result.file_path}`)).arrayBuffer());
        files.push({ ...(doc?.file_name ? { name: doc.file_name } : {}), mediaType: doc?.mime_type ?? 'image/jpeg', data });
      }
      return files;
    },
    // Cuts the long poll in flight (waiting for one if the adapter is between polls): it must poll again. A webhook
    // holds no connection to cut (its redelivery after a failed answer is the webhook test's case).
    ...(kernel ? {} : { dropConnection: () => waitFor(() => tg.dropConnections() || undefined, 10_000, 'a long poll to cut').then(() => undefined) }),
    typings: (n) => tg.callsOf('sendChatAction').filter((c) => String(c.params.chat_id) === String(dmId(n))).length,
    rateLimitOnce: (seconds) =>
      tg.failNext('sendMessage', { error_code: 429, description: `Too Many Requests: retry after ${seconds}`, parameters: { retry_after: seconds } }),
    thread: (n) => String(70 + n),
    stop: () => tg.stop(),
  };
}

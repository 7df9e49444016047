// The platform side of the LINE adapter's tests: the Messaging API fake, POSTing signed webhooks into the kernel.
import { startLineFake, type AgentTestKernel, type ChannelHarness, type LineFake, type LineSource } from '@talon/testing';
import { WEBHOOK_ROUTE } from '../config.ts';

export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-line'];

// DMs, groups get ids apart, in LINE's forms (U…, C…).
export const dmId = (n: number) => `U${String(n).padStart(32, '0')}`;
export const groupId = (n: number) => `C${String(n).padStart(32, '0')}`;
export const user = (n: number): LineSource => ({ type: 'user', userId: dmId(n) });

/** The texts LINE received for a chat, oldest first. */
export const textsTo = (line: LineFake, chatId: string) => line.pushes.filter((p) => p.to === chatId).flatMap((p) => p.messages.map((m) => String(m.text)));

export function configureOf(line: LineFake): Record<string, unknown> {
  return { token: line.token, channel_secret: line.channelSecret, api_url: line.apiRoot, data_url: line.apiRoot };
}

export async function lineHarness(kernel: () => AgentTestKernel): Promise<ChannelHarness & { line: LineFake }> {
  const line = await startLineFake({ redeliveryMs: 100 });
  let pointed = false;
  // LINE's console is told the webhook URL once the kernel runs (its port is known only then).
  const point = () => {
    if (!pointed) line.deliverTo(kernel().url + WEBHOOK_ROUTE);
    pointed = true;
  };
  return {
    line,
    // LINE has no captions: a picture and the words sent with it are two messages, joined into one turn here.
    configure: { ...configureOf(line), message_coalesce_window_ms: 300 },
    badCredentials: { token: 'refused-channel-access-token' },
    dm: (n, text) => {
      point();
      line.injectMessage(user(n), { type: 'text', text });
    },
    group: (n, text, { mentioned }) => {
      point();
      line.injectMessage({ type: 'group', groupId: groupId(n), userId: dmId(500 + n) }, { type: 'text', text, mentionSelf: mentioned });
    },
    received: (target) => textsTo(line, 'dm' in target ? dmId(target.dm) : groupId(target.group)),
    dmMedia: (n, file, caption) => {
      point();
      // LINE carries a file and its caption as two messages; an image keeps no name, a file does.
      if (file.mediaType.startsWith('image/')) line.injectMessage(user(n), { type: 'image', content: file.data, contentType: file.mediaType });
      else line.injectMessage(user(n), { type: 'file', fileName: file.name ?? 'file', content: file.data, contentType: file.mediaType });
      if (caption) line.injectMessage(user(n), { type: 'text', text: caption });
    },
    dmChat: dmId,
    typings: (n) => line.loadings(dmId(n)),
    rateLimitOnce: () => line.failNext('/v2/bot/message/push', 429),
    stop: () => line.stop(),
  };
}

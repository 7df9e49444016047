/**
 * One chunk → one JSON-RPC `send`: to the chat's number (recipient) or group (groupId), text as plain text, a file as
 * a data URI attachment (`data:<type>;filename=<name>;base64,…`, which signal-cli decodes itself); a file known only by
 * URL goes as a link in the text. The message id is the send's timestamp (Signal's identity of a message). Typing is
 * `sendTyping`, which Signal shows for about 15 s unless refreshed.
 */
import type { ChannelKit, OutboundChunk } from '@talon/channels';
import { channelError, type SignalRpc } from './rpc.ts';

const ACCOUNT = 'account';

export const target = (chatId: string) => (chatId.startsWith('group:') ? { groupId: chatId.slice('group:'.length) } : { recipient: [chatId] });

export function signalSender(rpc: SignalRpc, kit: ChannelKit, signal: AbortSignal) {
  // Signal's servers rate-limit a sender; a burst of messages is what gets an account a captcha challenge.
  const limiter = new kit.SendLimiter({ account: { capacity: 10, perSecond: 2 }, chat: { capacity: 5, perSecond: 1 } });
  const call = async <T>(method: string, params: Record<string, unknown>): Promise<T> => {
    try {
      return await rpc.call<T>(method, params, signal);
    } catch (err) {
      const e = err as { kind?: string; retryAfterMs?: number };
      if (e.kind === 'rate_limited') limiter.retryAfter(e.retryAfterMs ?? 1000, ACCOUNT);
      throw err;
    }
  };
  return {
    async send(chunk: OutboundChunk): Promise<{ messageId: string }> {
      await limiter.acquire(ACCOUNT, chunk.chatId, signal);
      const media = chunk.media;
      let message = chunk.text;
      const attachments: string[] = [];
      if (media?.data !== undefined) attachments.push(`data:${media.mediaType};filename=${media.name.replace(/[;,]/g, '_')};base64,${media.data}`);
      else if (media?.url) message = `${message}\n${media.name}: ${media.url}`.trim();
      const res = await call<{ timestamp?: number }>('send', { ...target(chunk.chatId), message, ...(attachments.length ? { attachments } : {}) });
      if (typeof res?.timestamp !== 'number') throw channelError('signal-cli answered the send with no timestamp', 'transient');
      return { messageId: String(res.timestamp) };
    },
    async typing(t: { chatId: string }): Promise<void> {
      await call('sendTyping', target(t.chatId));
    },
  };
}

/**
 * Chat's interaction events as the channels module's InboundMessage. Only MESSAGE events are heard (ADDED_TO_SPACE,
 * REMOVED_FROM_SPACE, CARD_CLICKED and the like are acknowledged and dropped). The chat is the space; a direct message
 * space is a DM, any other a group. A reply inside a thread (`threadReply`) carries its thread's name as the thread
 * (every message has a thread name, so a top-level one is not given its own). The app is mentioned when a
 * USER_MENTION annotation names a bot user: Chat delivers a space's messages to an app only when it is mentioned (or
 * by a slash command), so the mention in such a message is the app's. Files come as notes with their names: Chat's
 * media download needs a separate scope and is not made here.
 */
import type { InboundMessage } from '@talon/channels';

interface Annotation {
  type?: unknown;
  userMention?: { user?: { type?: unknown } };
}
export interface ChatEvent {
  type?: unknown;
  space?: { name?: unknown; type?: unknown; spaceType?: unknown };
  message?: {
    name?: unknown;
    text?: unknown;
    createTime?: unknown;
    threadReply?: unknown;
    thread?: { name?: unknown };
    sender?: { name?: unknown; displayName?: unknown; type?: unknown };
    annotations?: Annotation[];
    attachment?: Array<{ contentName?: unknown; contentType?: unknown }>;
  };
}

/** What the events route sees of the running adapter (absent while the channel is stopped). */
export interface ChatReceiver {
  /** The problem with the request's Authorization header, or undefined when Chat signed it. */
  verify(authorization: unknown): Promise<string | undefined>;
  /** Resolves once the event is committed to the journal (or is not one the agent hears); rejects otherwise. */
  take(event: ChatEvent): Promise<void>;
}

/** The module's slot for the running receiver: in the module copy's closure, so a reload swaps route and adapter together. */
export interface ChatEndpoint {
  current?: ChatReceiver;
}

const str = (v: unknown, max = 500): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= max ? v : undefined);

export function toInbound(event: ChatEvent): InboundMessage | undefined {
  const m = event.message;
  const space = str(event.space?.name);
  const id = str(m?.name);
  const sender = str(m?.sender?.name);
  if (event.type !== 'MESSAGE' || !m || !space || !id || !sender || m.sender?.type === 'BOT') return undefined;
  const dm = event.space?.type === 'DM' || event.space?.spaceType === 'DIRECT_MESSAGE';
  const thread = m.threadReply === true ? str(m.thread?.name) : undefined;
  const media = (m.attachment ?? []).map((a) => ({
    name: str(a.contentName, 255) ?? 'file',
    mediaType: str(a.contentType, 255) ?? 'application/octet-stream',
  }));
  const mentioned = (m.annotations ?? []).some((a) => a.type === 'USER_MENTION' && a.userMention?.user?.type === 'BOT');
  const name = str(m.sender?.displayName, 200);
  return {
    platformId: id,
    chatId: space,
    senderId: sender,
    text: typeof m.text === 'string' ? m.text.slice(0, 100_000) : '',
    isGroup: !dm,
    ...(dm ? {} : { mentioned }),
    ...(thread ? { threadId: thread } : {}),
    ...(name ? { senderName: name } : {}),
    ...(media.length ? { media } : {}),
    ...(str(m.createTime, 64) ? { sentAt: String(m.createTime) } : {}),
  };
}

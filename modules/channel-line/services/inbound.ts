/**
 * LINE's webhook events as the channels module's InboundMessage. Only message events in `active` mode are heard (a
 * `standby` event belongs to another module holding the chat); follow, join, postback, unsend and the like are
 * acknowledged and dropped. The chat a reply goes to is the source's user, group or room id; a group or room is a
 * group chat, where the bot counts as mentioned when a mentionee `isSelf`. Files come by the content API (up to
 * 10 MB); a file whose content is hosted elsewhere (`contentProvider.type = external`) comes as its link.
 */
import type { InboundMedia, InboundMessage } from '@talon/channels';
import type { LineApi } from './api.ts';
import { channelError } from './api.ts';

export const MAX_CONTENT_BYTES = 10 * 1024 * 1024;

type Source = { type?: unknown; userId?: unknown; groupId?: unknown; roomId?: unknown };
interface LineMessage {
  id?: unknown;
  type?: unknown;
  text?: unknown;
  fileName?: unknown;
  contentProvider?: { type?: unknown; originalContentUrl?: unknown };
  mention?: { mentionees?: Array<{ isSelf?: unknown }> };
}
export interface LineEvent {
  type?: unknown;
  mode?: unknown;
  timestamp?: unknown;
  source?: Source;
  message?: LineMessage;
}

const FILE_TYPES = new Set(['image', 'video', 'audio', 'file']);
const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'video/mp4': 'mp4',
  'audio/x-m4a': 'm4a',
  'audio/mp4': 'm4a',
};
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : undefined);

/** The chat of a source: a user (a DM), a group or a room (group chats). */
function chatOf(source: Source | undefined): { chatId: string; isGroup: boolean; senderId: string } | undefined {
  const user = str(source?.userId);
  if (source?.type === 'user' && user) return { chatId: user, isGroup: false, senderId: user };
  const group = source?.type === 'group' ? str(source.groupId) : source?.type === 'room' ? str(source.roomId) : undefined;
  // A member who has not added the bot as a friend may come without a userId: the group stands in as the sender.
  return group ? { chatId: group, isGroup: true, senderId: user ?? group } : undefined;
}

/** The file of a media message: downloaded by the content API, or its external link; undefined when gone (404). */
async function fileOf(m: LineMessage, id: string, api: LineApi, dataUrl: string): Promise<InboundMedia | undefined> {
  const external = m.contentProvider?.type === 'external' ? str(m.contentProvider.originalContentUrl) : undefined;
  const type = String(m.type);
  if (external) return { mediaType: type === 'image' ? 'image/jpeg' : 'application/octet-stream', name: `${type}-${id}`, url: external };
  const res = await api.call('GET', `${dataUrl}/v2/bot/message/${encodeURIComponent(id)}/content`, undefined, {}, [404, 410]);
  if (res.status !== 200) return undefined;
  if (res.truncated) return { mediaType: 'application/octet-stream', name: str(m.fileName) ?? `${type}-${id} (over 10 MB, not downloaded)` };
  const mediaType = (String(res.headers['content-type'] ?? 'application/octet-stream').split(';')[0] ?? '').trim().toLowerCase();
  const name = str(m.fileName) ?? `${type}-${id}.${EXTENSIONS[mediaType] ?? 'bin'}`;
  return { mediaType, name, data: res.body.toString('base64') };
}

/** The message of an event, or undefined for events the agent does not hear. Throws (a 5xx follows) when a download failed. */
export async function toInbound(event: LineEvent, api: LineApi, dataUrl: string): Promise<InboundMessage | undefined> {
  if (event.type !== 'message' || event.mode === 'standby') return undefined;
  const m = event.message;
  const id = str(m?.id);
  const chat = chatOf(event.source);
  if (!m || !id || !chat) return undefined;
  let text = '';
  const media: InboundMedia[] = [];
  if (m.type === 'text' && typeof m.text === 'string') text = m.text.slice(0, 100_000);
  else if (FILE_TYPES.has(String(m.type))) {
    const file = await fileOf(m, id, api, dataUrl).catch((err: Error) => {
      throw channelError(`the content of message ${id} could not be downloaded: ${err.message}`, 'transient');
    });
    if (file) media.push(file);
    else text = `[a ${String(m.type)} that LINE no longer has]`;
  } else return undefined;
  // Signed bodies are still checked for shape: a bad field is skipped, never a TypeError answered 500 and redelivered.
  const mentionees: unknown[] = Array.isArray(m.mention?.mentionees) ? m.mention.mentionees : [];
  const mentioned = chat.isGroup && mentionees.some((e) => (e as { isSelf?: unknown } | null)?.isSelf === true);
  return {
    platformId: id,
    chatId: chat.chatId,
    senderId: chat.senderId,
    text,
    isGroup: chat.isGroup,
    ...(chat.isGroup ? { mentioned } : {}),
    ...(media.length ? { media } : {}),
    ...(typeof event.timestamp === 'number' && Math.abs(event.timestamp) < 8.64e15 ? { sentAt: new Date(event.timestamp).toISOString() } : {}),
  };
}

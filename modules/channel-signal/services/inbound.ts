/**
 * A signal-cli `receive` notification as the channels module's InboundMessage. Only data messages with text or
 * attachments are messages (receipts, typing, reactions, deletions and sync messages of the bot's other devices are
 * not). A group's chat is `group:<groupId>`, a direct chat the sender's number (or their ACI uuid when they hide it).
 * The platform id is the sender and the envelope timestamp, Signal's own message identity: a notification seen twice
 * (the daemon delivering again after a reconnect) is dropped by the journal. In groups the bot is mentioned when the
 * message's `mentions` name its number, or when it quotes (replies to) one of the bot's messages.
 */
import type { AdapterContext, InboundMedia, InboundMessage } from '@talon/channels';
import type { SignalRpc } from './rpc.ts';

const MAX_MEDIA_BYTES = 10 * 1024 * 1024;

interface Attachment {
  contentType?: string;
  filename?: string;
  id?: string;
  size?: number;
}

export interface Envelope {
  source?: string;
  sourceNumber?: string | null;
  sourceUuid?: string;
  sourceName?: string;
  timestamp: number;
  dataMessage?: {
    timestamp?: number;
    message?: string | null;
    groupInfo?: { groupId?: string };
    mentions?: Array<{ number?: string | null; uuid?: string; start?: number; length?: number }>;
    quote?: { author?: string; authorNumber?: string | null };
    attachments?: Attachment[];
  };
}

/** The envelope of an SSE `receive` event's data: `{envelope, account}` (or a JSON-RPC notification carrying it). */
export function envelopeOf(data: string): Envelope | undefined {
  let parsed: { envelope?: Envelope; method?: string; params?: { envelope?: Envelope; result?: { envelope?: Envelope } } };
  try {
    parsed = JSON.parse(data) as typeof parsed;
  } catch {
    return undefined;
  }
  const envelope = parsed.envelope ?? parsed.params?.envelope ?? parsed.params?.result?.envelope;
  return envelope && typeof envelope.timestamp === 'number' ? envelope : undefined;
}

export async function toInbound(envelope: Envelope, deps: { ctx: AdapterContext; rpc: SignalRpc; number: string }): Promise<InboundMessage | undefined> {
  const data = envelope.dataMessage;
  const sender = envelope.sourceNumber || envelope.sourceUuid || envelope.source;
  if (!data || !sender || sender === deps.number) return undefined;
  const text = data.message ?? '';
  const attachments = data.attachments ?? [];
  if (!text && !attachments.length) return undefined;
  const groupId = data.groupInfo?.groupId;
  const media: InboundMedia[] = [];
  for (const a of attachments.slice(0, 10)) media.push(await download(a, groupId ? { groupId } : { recipient: sender }, deps));
  return {
    platformId: `${envelope.sourceUuid || sender}:${envelope.timestamp}`,
    chatId: groupId ? `group:${groupId}` : sender,
    senderId: sender,
    ...(envelope.sourceName ? { senderName: envelope.sourceName } : {}),
    text,
    isGroup: Boolean(groupId),
    ...(groupId ? { mentioned: mentioned(data, deps.number) } : {}),
    ...(media.length ? { media } : {}),
    sentAt: new Date(envelope.timestamp).toISOString(),
  };
}

export function mentioned(data: NonNullable<Envelope['dataMessage']>, number: string): boolean {
  if ((data.mentions ?? []).some((m) => m.number === number)) return true;
  return data.quote?.authorNumber === number || data.quote?.author === number;
}

/** The attachment's bytes by the daemon's getAttachment (base64), up to 10 MB; larger or gone: named only. */
async function download(
  a: Attachment,
  where: { groupId: string } | { recipient: string },
  deps: { rpc: SignalRpc; ctx: AdapterContext },
): Promise<InboundMedia> {
  const named: InboundMedia = { mediaType: a.contentType || 'application/octet-stream', ...(a.filename ? { name: a.filename } : {}) };
  if (!a.id || (a.size ?? 0) > MAX_MEDIA_BYTES) return named;
  try {
    const got = await deps.rpc.call<{ data?: string }>('getAttachment', { id: a.id, ...where }, deps.ctx.signal);
    return typeof got?.data === 'string' && got.data.length <= (MAX_MEDIA_BYTES * 4) / 3 + 4 ? { ...named, data: got.data } : named;
  } catch (err) {
    // A permanent refusal (the file is gone) names the file; anything else fails the message, which is then retried.
    if ((err as { kind?: string }).kind === 'permanent') return named;
    throw err;
  }
}

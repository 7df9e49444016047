/**
 * A reply's Markdown → the chunks of its platform, each rendered to the adapter's format (ChannelLimits.format) with
 * its plain text alongside for a platform that refuses the markup (Telegram's retry). The Markdown is chunked first
 * and each chunk rendered, since the rendered text is no longer than its source where it counts (Telegram counts
 * after entity parsing) and a cut must not fall inside a tag or an escape; plain text is rendered first and chunked
 * after, since the platform counts exactly what goes out (IRC's bytes). `markdown` passes the Markdown through: the
 * platform (or an adapter such as email, building its own alternatives) renders it. Uploads follow the text, one chunk
 * each with no text of its own (one platform call per file; links went into the text before, see media.ts).
 */
import { randomUUID } from 'node:crypto';
import type { ChannelLimits, OutboundChunk, OutboundMedia } from '@talon/channels';
import { chunkText } from '../kit/chunk.ts';
import { formatReply, toPlainText } from '../kit/format.ts';

export function chunksFor(
  text: string,
  limits: ChannelLimits,
  target: { chatId: string; threadId?: string; replyTo?: string },
  uploads: readonly OutboundMedia[] = [],
): OutboundChunk[] {
  const cut = (s: string, fences: boolean) => chunkText(s, { max: limits.maxLength, unit: limits.unit, maxLines: limits.maxLines, fences });
  const rendered =
    limits.format === 'plain'
      ? cut(toPlainText(text), false).map((piece) => ({ text: piece, plain: piece }))
      : cut(text, true).map((piece) => ({ text: formatReply(piece, limits.format), plain: toPlainText(piece) }));
  const pieces: Array<{ text: string; plain: string; media?: OutboundMedia }> = [
    ...rendered.filter((r) => r.text.trim() !== ''), // a chunk that renders to nothing (a link with a refused scheme and no text)
    ...uploads.map((media) => ({ text: '', plain: '', media })),
  ];
  return pieces.map((r) => ({
    chatId: target.chatId,
    ...(target.threadId ? { threadId: target.threadId } : {}),
    ...(target.replyTo ? { replyTo: target.replyTo } : {}),
    text: r.text,
    plain: r.plain,
    ...(r.media ? { media: r.media } : {}),
    nonce: randomUUID(),
  }));
}

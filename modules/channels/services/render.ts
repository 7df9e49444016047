/**
 * A reply's Markdown → the chunks of its platform, each rendered to the adapter's format (ChannelLimits.format) with
 * its plain text alongside for a platform that refuses the markup (Telegram's retry). The Markdown is chunked first
 * and each chunk rendered, since the rendered text is no longer than its source where it counts (Telegram counts
 * after entity parsing) and a cut must not fall inside a tag or an escape; plain text is rendered first and chunked
 * after, since the platform counts exactly what goes out (IRC's bytes). `markdown` passes the Markdown through: the
 * platform (or an adapter such as email, building its own alternatives) renders it.
 */
import { randomUUID } from 'node:crypto';
import type { ChannelLimits, OutboundChunk } from '@talon/channels';
import { chunkText } from '../kit/chunk.ts';
import { formatReply, toPlainText } from '../kit/format.ts';

export function chunksFor(text: string, limits: ChannelLimits, target: { chatId: string; threadId?: string; replyTo?: string }): OutboundChunk[] {
  const cut = (s: string, fences: boolean) => chunkText(s, { max: limits.maxLength, unit: limits.unit, maxLines: limits.maxLines, fences });
  const rendered =
    limits.format === 'plain'
      ? cut(toPlainText(text), false).map((piece) => ({ text: piece, plain: piece }))
      : cut(text, true).map((piece) => ({ text: formatReply(piece, limits.format), plain: toPlainText(piece) }));
  return rendered
    .filter((r) => r.text.trim() !== '') // a chunk that renders to nothing (a link with a refused scheme and no text)
    .map((r) => ({
      chatId: target.chatId,
      ...(target.threadId ? { threadId: target.threadId } : {}),
      ...(target.replyTo ? { replyTo: target.replyTo } : {}),
      text: r.text,
      plain: r.plain,
      nonce: randomUUID(),
    }));
}

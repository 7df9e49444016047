/**
 * A reply's text → the chunks of its platform: cut at the platform's limit by the kit's chunker. Formatting to the
 * platform's markup (Telegram HTML, Slack mrkdwn) is the kit's converter's job; until it is wired in here, chunks go out
 * as the Markdown the model wrote (`text` and `plain` alike).
 */
import { randomUUID } from 'node:crypto';
import type { ChannelLimits, OutboundChunk } from '@talon/channels';
import { chunkText } from '../kit/chunk.ts';

export function chunksFor(text: string, limits: ChannelLimits, target: { chatId: string; threadId?: string; replyTo?: string }): OutboundChunk[] {
  const pieces = chunkText(text, { max: limits.maxLength, unit: limits.unit, maxLines: limits.maxLines, fences: limits.format !== 'plain' });
  return pieces.map((piece) => ({
    chatId: target.chatId,
    ...(target.threadId ? { threadId: target.threadId } : {}),
    ...(target.replyTo ? { replyTo: target.replyTo } : {}),
    text: piece,
    plain: piece,
    nonce: randomUUID(),
  }));
}

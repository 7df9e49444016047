/** The outbound kit every channel adapter shares: pure helpers, no I/O (README.md). */
export { chunkPieces, chunkText, DISCORD_LIMITS, ircLimits, measure, TELEGRAM_LIMITS } from './chunk.ts';
export type { ChunkLimits, ChunkPiece, ChunkUnit } from './chunk.ts';
export { formatReply, toPlainText, toSlackMrkdwn, toTelegramHtml } from './format.ts';
export type { ReplyFormat } from './format.ts';
export { backoffDelay, RECONNECT_CAP_MS, Reconnector, reportHealth } from './backoff.ts';
export type { ReconnectHealth, ReconnectLink, ReconnectOptions } from './backoff.ts';
export { KeyedBuckets, RateLimitedError, retryAfterMs, SendLimiter } from './bucket.ts';
export type { BucketSpec, KeyedBucketOptions, SendLimiterOptions } from './bucket.ts';
export { TypingController, withTyping } from './typing.ts';
export type { TypingIndicator, TypingOptions } from './typing.ts';
export { sleep, systemTimers } from './timers.ts';
export type { Timers } from './timers.ts';

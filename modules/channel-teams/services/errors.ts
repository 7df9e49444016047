/** ChannelError for the Teams adapter (told by name and kind across module bundles, never instanceof). */
import type { ChannelError } from '@talon/channels';

export function channelError(kind: ChannelError['kind'], message: string, retryAfterMs?: number): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}

/** A failed net fetch: net's refusal (SSRF rule, scheme) is configuration and no retry helps; the rest is transient. */
export function fetchFailure(err: unknown, what: string): ChannelError {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof Error && err.name === 'FetchRefused') return channelError('permanent', `teams: ${what} is refused: ${message}`);
  return channelError('transient', `teams: ${what} could not be reached: ${message}`);
}

/** The Retry-After of a 429 as milliseconds (seconds or an HTTP date; 1 s when absent). */
export function retryAfter(header: string | string[] | undefined, read: (value: string | undefined, nowMs: number) => number | undefined): number {
  return read(typeof header === 'string' ? header : undefined, Date.now()) ?? 1000;
}

/**
 * Zulip's failures as the channels module's ChannelError kinds. Zulip answers errors as `{result: "error", msg, code}`:
 * 401 (UNAUTHORIZED, INVALID_API_KEY, USER_DEACTIVATED) is a refused API key; 429 RATE_LIMIT_HIT carries
 * `retry-after` seconds in the body and the Retry-After header; BAD_EVENT_QUEUE_ID is an expired queue (registered
 * again by the poller); other 4xx are permanent, 5xx and network failures transient.
 */
import type { ChannelError } from '@talon/channels';

type Kind = ChannelError['kind'];

export function channelError(message: string, kind: Kind, retryAfterMs?: number, cause?: unknown): ChannelError {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), {
    name: 'ChannelError' as const,
    kind,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/** A Zulip answer that was not a success, with its error code. */
export class ZulipError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = 'ZulipError';
  }
}

export const isAuthFailure = (err: unknown): boolean =>
  (err instanceof ZulipError && err.status === 401) || (err instanceof Error && err.name === 'ChannelError' && (err as { kind?: string }).kind === 'auth');

export const isBadQueue = (err: unknown): boolean => err instanceof ZulipError && err.code === 'BAD_EVENT_QUEUE_ID';

/** Any failure as a ChannelError; the API key never appears in it (it travels in the Authorization header only). */
export function toChannelError(err: unknown): ChannelError {
  if (err instanceof Error && err.name === 'ChannelError') return err as ChannelError;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ZulipError) {
    if (err.status === 429) return channelError(message, 'rate_limited', err.retryAfterMs ?? 1000, err);
    if (err.status === 401) return channelError(`the Zulip server refused the bot's email or API key (${message})`, 'auth', undefined, err);
    if (err.status >= 400 && err.status < 500) return channelError(message, 'permanent', undefined, err);
  }
  return channelError(message, 'transient', undefined, err);
}

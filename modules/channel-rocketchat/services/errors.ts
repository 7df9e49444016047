/**
 * Rocket.Chat's failures as the channels module's ChannelError kinds. REST errors are `{success: false, error}` or
 * `{status: 'error', message}` bodies: 401 is a refused token (auth), as is a DDP login refused; 429 carries
 * X-RateLimit-Reset (the epoch milliseconds the window ends); other 4xx are permanent; 5xx and network failures
 * transient.
 */
import type { ChannelError } from '@talon/channels';

export function channelError(message: string, kind: ChannelError['kind'], retryAfterMs?: number, cause?: unknown): ChannelError {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), {
    name: 'ChannelError' as const,
    kind,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/** A server answer that was not a 2xx, with Rocket.Chat's error id. */
export class RocketChatError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = 'RocketChatError';
  }
}

export const isAuthFailure = (err: unknown): boolean =>
  (err instanceof RocketChatError && err.status === 401) || (err instanceof Error && err.name === 'ChannelError' && (err as ChannelError).kind === 'auth');

/** Any failure as a ChannelError; the token never appears in it (it travels in the Authorization header only). */
export function toChannelError(err: unknown): ChannelError {
  if (err instanceof Error && err.name === 'ChannelError') return err as ChannelError;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof RocketChatError) {
    if (err.status === 429) return channelError(message, 'rate_limited', err.retryAfterMs ?? 1000, err);
    if (err.status === 401) return channelError(`Rocket.Chat refused the access token (${message})`, 'auth', undefined, err);
    if (err.status >= 400 && err.status < 500) return channelError(message, 'permanent', undefined, err);
  }
  return channelError(message, 'transient', undefined, err);
}

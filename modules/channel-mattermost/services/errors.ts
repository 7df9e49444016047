/**
 * Mattermost's failures as the channels module's ChannelError kinds. Its errors are `{id, message, status_code}`
 * bodies: 401 is a refused or expired token (auth); 429 carries Retry-After or X-Ratelimit-Reset (seconds until the
 * limiter's window resets); other 4xx are permanent; 5xx and network failures transient.
 */
import type { ChannelError } from '@talon/channels';

export function channelError(message: string, kind: ChannelError['kind'], retryAfterMs?: number, cause?: unknown): ChannelError {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), {
    name: 'ChannelError' as const,
    kind,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/** A server answer that was not a 2xx, with Mattermost's error id. */
export class MattermostError extends Error {
  constructor(
    readonly status: number,
    readonly id: string,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(`${status} ${id}: ${message}`);
    this.name = 'MattermostError';
  }
}

export const isAuthFailure = (err: unknown): boolean =>
  (err instanceof MattermostError && err.status === 401) || (err instanceof Error && err.name === 'ChannelError' && (err as ChannelError).kind === 'auth');

/** Any failure as a ChannelError; the token never appears in it (it travels in the Authorization header only). */
export function toChannelError(err: unknown): ChannelError {
  if (err instanceof Error && err.name === 'ChannelError') return err as ChannelError;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof MattermostError) {
    if (err.status === 429) return channelError(message, 'rate_limited', err.retryAfterMs ?? 1000, err);
    if (err.status === 401) return channelError(`Mattermost refused the access token (${message})`, 'auth', undefined, err);
    if (err.status >= 400 && err.status < 500) return channelError(message, 'permanent', undefined, err);
  }
  return channelError(message, 'transient', undefined, err);
}

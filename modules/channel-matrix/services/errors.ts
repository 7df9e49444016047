/**
 * The homeserver's failures as the channels module's ChannelError kinds. Matrix errors are `{errcode, error}` bodies:
 * M_LIMIT_EXCEEDED (429) carries retry_after_ms (or a Retry-After header); M_UNKNOWN_TOKEN / M_MISSING_TOKEN (401)
 * and M_FORBIDDEN on whoami are a refused token; other 4xx are permanent; 5xx and network failures transient.
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

/** A homeserver answer that was not a 2xx, with its Matrix error code. */
export class MatrixError extends Error {
  constructor(
    readonly status: number,
    readonly errcode: string,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(`${status} ${errcode}: ${message}`);
    this.name = 'MatrixError';
  }
}

export const isAuthFailure = (err: unknown): boolean =>
  err instanceof MatrixError && (err.status === 401 || err.errcode === 'M_UNKNOWN_TOKEN' || err.errcode === 'M_MISSING_TOKEN');

/** Any failure as a ChannelError; the token never appears in it (the client never puts it in a URL or message). */
export function toChannelError(err: unknown): ChannelError {
  if (err instanceof Error && err.name === 'ChannelError') return err as ChannelError;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof MatrixError) {
    if (err.status === 429) return channelError(message, 'rate_limited', err.retryAfterMs ?? 1000, err);
    if (isAuthFailure(err)) return channelError(`the homeserver refused the access token (${message})`, 'auth', undefined, err);
    if (err.status >= 400 && err.status < 500) return channelError(message, 'permanent', undefined, err);
  }
  return channelError(message, 'transient', undefined, err);
}

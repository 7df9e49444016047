/**
 * Telegram's failures as the channels module's ChannelError kinds: 429 keeps its retry_after, a refused token (401,
 * or 404 for a malformed one) is an auth error, 409 is a second poller or a webhook, other 4xx are permanent, and the
 * rest (5xx, network) transient. Messages never carry the token (grammY's own hide the URL; ours redact it).
 */
import { GrammyError } from 'grammy';
import type { ChannelError } from '@talon/channels';

type Kind = ChannelError['kind'];

export function channelError(message: string, kind: Kind, retryAfterMs?: number, cause?: unknown): ChannelError {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), {
    name: 'ChannelError' as const,
    kind,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

export const isAuthFailure = (err: unknown): boolean => err instanceof GrammyError && (err.error_code === 401 || err.error_code === 404);

export const isConflict = (err: unknown): boolean => err instanceof GrammyError && err.error_code === 409;

/** Telegram refused the HTML (an entity it cannot parse): the same text goes again as plain text. */
export const isParseError = (err: unknown): boolean => err instanceof GrammyError && err.error_code === 400 && /can't parse entities/i.test(err.description);

/** The Bot API's retry_after in ms, when the error is a 429. */
export function retryAfter(err: unknown, read: (value: number | undefined, now: number) => number | undefined): number | undefined {
  if (!(err instanceof GrammyError) || err.error_code !== 429) return undefined;
  return read(err.parameters.retry_after, Date.now()) ?? 1000;
}

export function describe(err: unknown, token: string | undefined): string {
  let text: string;
  if (err instanceof GrammyError) text = `${err.error_code} ${err.description}`;
  else text = err instanceof Error ? err.message : String(err);
  if (isConflict(err)) {
    text = /webhook/i.test(text)
      ? `a webhook is set for this bot, so getUpdates is refused (${text})`
      : `another process is polling this bot token: only one getUpdates poller may run per token (${text})`;
  }
  if (isAuthFailure(err)) text = `Telegram refused the bot token (${text})`;
  return token ? text.split(token).join('<token>') : text;
}

export function toChannelError(err: unknown, token: string, retryAfterMs: number | undefined): ChannelError {
  const message = describe(err, token);
  if (retryAfterMs !== undefined) return channelError(message, 'rate_limited', retryAfterMs, err);
  if (isAuthFailure(err)) return channelError(message, 'auth', undefined, err);
  if (err instanceof GrammyError && err.error_code >= 400 && err.error_code < 500 && err.error_code !== 409)
    return channelError(message, 'permanent', undefined, err);
  return channelError(message, 'transient', undefined, err);
}

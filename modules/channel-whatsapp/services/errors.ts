/**
 * Graph API failures as the channels module's ChannelError kinds. Graph answers `{error: {message, type, code}}`:
 * 401 or code 190 is a refused or expired token (auth: the channel stops with last_error); 429 and the throughput codes
 * (4, 80007, 130429, 131056) are rate limits, waited out for Retry-After when Graph sends one and RATE_WAIT_MS when
 * not (it usually does not); 5xx and network failures are transient; any other 4xx (a number not on WhatsApp, outside
 * the 24-hour window, a bad parameter) is permanent: sending it again would be refused again.
 */
import type { ChannelError } from '@talon/channels';

/** How long a rate limit without Retry-After pauses the chat (Meta asks for a back-off and names no time). */
export const RATE_WAIT_MS = 5_000;

const RATE_CODES = new Set([4, 80007, 130429, 131056]);

export function channelError(kind: ChannelError['kind'], message: string, retryAfterMs?: number): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}

/** The `error` object of a Graph answer, when it has one. */
export function graphErrorOf(body: unknown): { message: string; code?: number } | undefined {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof error !== 'object' || error === null) return undefined;
  const { message, code } = error as { message?: unknown; code?: unknown };
  return { message: typeof message === 'string' ? message : 'unknown error', ...(typeof code === 'number' ? { code } : {}) };
}

/** A failed Graph answer, classified; `retryAfterMs` is the Retry-After header read by the kit, when there is one. */
export function toChannelError(status: number, body: unknown, retryAfterMs: number | undefined): ChannelError {
  const error = graphErrorOf(body);
  const text = `whatsapp: HTTP ${status}${error ? ` ${error.code ?? ''} ${error.message}` : ''}`.replace(/\s+/g, ' ').trim();
  if (status === 429 || (error?.code !== undefined && RATE_CODES.has(error.code))) return channelError('rate_limited', text, retryAfterMs ?? RATE_WAIT_MS);
  if (status === 401 || error?.code === 190) return channelError('auth', `${text} (the access token was refused)`);
  if (status >= 400 && status < 500) return channelError('permanent', text);
  return channelError('transient', text);
}

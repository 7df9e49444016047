import { createHash, timingSafeEqual } from 'node:crypto';

export const MISSING = 'Missing Authorization: Bearer <api_key> header';
export const INVALID = 'Invalid API key';

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m?.[1];
}

/**
 * Constant-time comparison: both sides are hashed first, so the compared
 * buffers always have the same length and neither the key's length nor the
 * position of the first differing byte shows in the timing.
 */
export function sameKey(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * A browser's WebSocket cannot send an Authorization header, so on an upgrade the key may come as an
 * offered subprotocol `bearer.<api_key>` (beside the real one, e.g. `new WebSocket(url, ['talon', 'bearer.' + key])`):
 * it travels in a header, never in the URL. The server selects the first offered protocol.
 */
export function upgradeAuthorization(headers: Record<string, string | string[] | undefined>): string | undefined {
  if (headers.authorization !== undefined || headers.upgrade === undefined) return headers.authorization as string | undefined;
  const offered = String(headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim());
  const token = offered.find((p) => p.startsWith('bearer.'))?.slice('bearer.'.length);
  return token ? `Bearer ${token}` : undefined;
}

/** undefined when the request may pass, else the 401 message. */
export function verdict(header: string | undefined, apiKey: string): string | undefined {
  const token = bearerToken(header);
  if (token === undefined) return MISSING;
  return sameKey(token, apiKey) ? undefined : INVALID;
}

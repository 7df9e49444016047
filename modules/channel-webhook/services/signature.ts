/**
 * The webhook's signature scheme, both ways: `X-Talon-Signature: sha256=<hex>` is HMAC-SHA256 with the channel's token
 * over `<X-Talon-Timestamp>.<raw body>`. The timestamp (Unix seconds) binds the signature to a moment, so a captured
 * request replays for at most the window; the comparison is constant-time so the signature cannot be guessed byte by byte.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const TIMESTAMP_HEADER = 'x-talon-timestamp';
export const SIGNATURE_HEADER = 'x-talon-signature';
/** How far a timestamp may be from now, either way (clock skew and delivery delay). */
export const WINDOW_SECONDS = 300;

const hmac = (secret: string, timestamp: string, body: string) => createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

/** The headers that sign `body` now. */
export function signHeaders(secret: string, body: string, nowMs = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return { 'X-Talon-Timestamp': timestamp, 'X-Talon-Signature': `sha256=${hmac(secret, timestamp, body)}` };
}

/** Why a request's signature is refused, or undefined when it is good. The reason never includes the expected value. */
export function signatureProblem(secret: string, timestamp: unknown, signature: unknown, body: string, nowMs = Date.now()): string | undefined {
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) return `missing or malformed ${TIMESTAMP_HEADER} (Unix seconds)`;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > WINDOW_SECONDS) return `${TIMESTAMP_HEADER} is outside the ${WINDOW_SECONDS / 60}-minute window`;
  if (typeof signature !== 'string' || !/^sha256=[0-9a-f]{64}$/i.test(signature)) return `missing or malformed ${SIGNATURE_HEADER} (sha256=<hex>)`;
  const given = Buffer.from(signature.slice(7).toLowerCase(), 'hex');
  const expected = Buffer.from(hmac(secret, timestamp, body), 'hex');
  return timingSafeEqual(given, expected) ? undefined : `${SIGNATURE_HEADER} does not match`;
}

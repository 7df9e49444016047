/**
 * LINE's webhook signature: `X-Line-Signature` is the base64 HMAC-SHA256 of the raw request body with the channel
 * secret. It is checked on the exact bytes received, before the body is parsed, and compared in constant time so it
 * cannot be found byte by byte.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-line-signature';

export const lineSignature = (secret: string, body: string | Buffer): string => createHmac('sha256', secret).update(body).digest('base64');

/** The header signs the body with the secret. */
export function signatureValid(secret: string, header: unknown, body: string | Buffer): boolean {
  if (typeof header !== 'string' || !/^[A-Za-z0-9+/]{43}=$/.test(header)) return false;
  return timingSafeEqual(Buffer.from(header, 'base64'), createHmac('sha256', secret).update(body).digest());
}

/**
 * Meta's webhook checks. Every POST carries `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the raw body with
 * the app secret; the verification GET carries the verify token chosen when the callback URL was set. Both are compared
 * in constant time (over digests of equal length, so not even a length tells anything), and a refusal never names the
 * expected value.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-hub-signature-256';

/** Why the signature of `raw` is refused, or undefined when it is good. */
export function signatureProblem(appSecret: string, header: unknown, raw: Buffer): string | undefined {
  if (typeof header !== 'string' || !/^sha256=[0-9a-f]{64}$/i.test(header)) return `missing or malformed ${SIGNATURE_HEADER} (sha256=<hex>)`;
  const given = Buffer.from(header.slice(7).toLowerCase(), 'hex');
  const expected = createHmac('sha256', appSecret).update(raw).digest();
  return timingSafeEqual(given, expected) ? undefined : `${SIGNATURE_HEADER} does not match the body`;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The verification GET's hub.verify_token is the configured one. */
export function sameToken(given: unknown, expected: string): boolean {
  return typeof given === 'string' && timingSafeEqual(digest(given), digest(expected));
}

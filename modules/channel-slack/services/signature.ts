/**
 * Slack's request signing (HTTP mode): `X-Slack-Signature: v0=<hex>` is HMAC-SHA256 with the app's signing secret
 * over `v0:<X-Slack-Request-Timestamp>:<raw body>`. The timestamp must be within five minutes of now, so a captured
 * request replays for at most that long; the comparison is constant-time. Written here rather than taken from Bolt,
 * whose verifier comes with its Express receiver; node:crypto does the work.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const TIMESTAMP_HEADER = 'x-slack-request-timestamp';
export const SIGNATURE_HEADER = 'x-slack-signature';
/** Slack's own window (its "Verifying requests from Slack" guide): five minutes either way. */
export const WINDOW_SECONDS = 300;

const hmac = (secret: string, timestamp: string, body: string) => createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex');

/** Why a request is refused, or undefined when its signature is good. The reason never includes the expected value. */
export function signatureProblem(secret: string, timestamp: unknown, signature: unknown, body: string, nowMs = Date.now()): string | undefined {
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) return `missing or malformed ${TIMESTAMP_HEADER} (Unix seconds)`;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > WINDOW_SECONDS) return `${TIMESTAMP_HEADER} is outside the ${WINDOW_SECONDS / 60}-minute window`;
  if (typeof signature !== 'string' || !/^v0=[0-9a-f]{64}$/i.test(signature)) return `missing or malformed ${SIGNATURE_HEADER} (v0=<hex>)`;
  const given = Buffer.from(signature.slice(3).toLowerCase(), 'hex');
  const expected = Buffer.from(hmac(secret, timestamp, body), 'hex');
  return timingSafeEqual(given, expected) ? undefined : `${SIGNATURE_HEADER} does not match`;
}

/**
 * One signed POST to a webhook target through the net module's SSRF-checked, address-pinned client:
 * `X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, body)>` and `X-Webhook-Timestamp` (ms since the epoch).
 * Redirects are not followed (a redirect is a failed attempt).
 */
import { createHmac } from 'node:crypto';
import type { NetFetch } from '@talon/net';

export interface SendResult {
  ok: boolean;
  status: number | null;
  error?: string;
}

export const signature = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

export async function sendSigned(
  net: NetFetch,
  target: { url: string; secret?: string; event: string; id: string },
  body: string,
  options: { timeoutMs: number; allowHosts: readonly string[]; signal?: AbortSignal },
): Promise<SendResult> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Talon-Webhook/1.0',
    'x-webhook-event': target.event,
    'x-webhook-id': target.id,
    'x-webhook-timestamp': String(Date.now()),
  };
  if (target.secret) headers['x-webhook-signature'] = signature(target.secret, body);
  try {
    const res = await net.fetch({
      url: target.url,
      method: 'POST',
      headers,
      body,
      timeoutMs: options.timeoutMs,
      maxBytes: 4096,
      maxRedirects: 0,
      allowHosts: options.allowHosts,
      signal: options.signal,
    });
    const ok = res.status >= 200 && res.status < 300;
    return { ok, status: res.status, ...(ok ? {} : { error: `the target answered ${res.status}` }) };
  } catch (err) {
    return { ok: false, status: null, error: (err as Error).message || String(err) };
  }
}

/** openid-client's HTTP through the net module's SSRF-checked, address-pinned client. */
import type { CustomFetch } from 'openid-client';
import type { NetFetch } from '@talon/net';

const MAX_BYTES = 1024 * 1024;
const NO_BODY = new Set([101, 204, 205, 304]);

export function safeFetch(net: () => NetFetch, allowHosts: () => readonly string[]): CustomFetch {
  return async (url, options) => {
    const body = options.body === undefined || options.body === null ? undefined : String(options.body);
    const res = await net().fetch({
      url,
      method: options.method,
      headers: options.headers,
      body,
      timeoutMs: 15_000,
      maxBytes: MAX_BYTES,
      maxRedirects: 0,
      allowHosts: allowHosts(),
      signal: options.signal ?? undefined,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    return new Response(NO_BODY.has(res.status) ? null : new Uint8Array(res.body), { status: res.status, headers });
  };
}

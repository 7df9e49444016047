/**
 * The net.fetch service: the one SSRF-checked, address-pinned client every outbound caller uses (buffered, streamed
 * for SDK clients, or a check alone for clients such as git).
 */
import ipaddr from 'ipaddr.js';
import type { NetFetch } from '@talon/net';
import { allowList } from './allow.ts';
import { FetchRefused, defaultResolve, pinnedFetch, type Resolve } from './pinned-fetch.ts';
import { checkAddress, hostAllowListed, originAllowListed } from './ssrf.ts';
import { streamFetch } from './stream-fetch.ts';

/** `resolve`: DNS resolution (tests replace it). */
export function createNet(resolve: Resolve = defaultResolve): NetFetch {
  return {
    fetch: (request) =>
      pinnedFetch({
        url: request.url,
        method: request.method,
        headers: request.headers,
        body: request.body,
        timeoutMs: request.timeoutMs,
        maxBytes: request.maxBytes,
        maxRedirects: request.maxRedirects ?? 5,
        allow: allowList(request),
        permitHost: request.permitHost,
        signal: request.signal,
        resolve,
      }),
    webFetch: (input, init, policy) => streamFetch(input, init, policy, resolve),
    async check(url, exemptions) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new FetchRefused(`'${url}' is not a valid URL`);
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        throw new FetchRefused(`unsupported URL scheme '${parsed.protocol}' (only http and https)`);
      if (parsed.username || parsed.password) throw new FetchRefused('URLs with embedded credentials are not fetched');
      const host = parsed.hostname.replace(/^\[|\]$/g, '');
      const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
      const allow = allowList(exemptions);
      if (hostAllowListed(host, allow) || originAllowListed(host, port, allow)) return;
      const addresses = ipaddr.isValid(host) ? [{ address: host }] : await resolve(host).catch(() => []);
      if (!addresses.length) throw new FetchRefused(`could not resolve host '${host}'`);
      for (const a of addresses) {
        const verdict = checkAddress(a.address, allow);
        if (!verdict.allowed) throw new FetchRefused(`SSRF protection: blocked request to '${host}': ${verdict.reason}`);
      }
    },
  };
}

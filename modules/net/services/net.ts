/**
 * The SSRF-checked fetch as a service for other modules (registry downloads): the same code the web_fetch tool
 * uses, so there is one SSRF rule (the subprocess sandbox is offered the same way, from index.ts).
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import type { SafeNet } from '@talon/tools';
import { FetchRefused, pinnedFetch } from './pinned-fetch.ts';
import { checkAddress, hostAllowListed } from './ssrf.ts';

function allowList(hosts: readonly string[] = []) {
  return { allow_hosts: hosts, allow_cidrs: [] };
}

export const safeNet: SafeNet = {
  fetch: (request) =>
    pinnedFetch({
      url: request.url,
      method: request.method,
      headers: request.headers,
      body: request.body,
      timeoutMs: request.timeoutMs,
      maxBytes: request.maxBytes,
      maxRedirects: request.maxRedirects ?? 5,
      allow: allowList(request.allowHosts),
      permitHost: () => undefined,
      signal: request.signal,
    }),
  async check(url, allowHosts) {
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
    const allow = allowList(allowHosts);
    if (hostAllowListed(host, allow)) return;
    const addresses = ipaddr.isValid(host) ? [{ address: host }] : await lookup(host, { all: true, verbatim: true }).catch(() => []);
    if (!addresses.length) throw new FetchRefused(`could not resolve host '${host}'`);
    for (const a of addresses) {
      const verdict = checkAddress(a.address, allow);
      if (!verdict.allowed) throw new FetchRefused(`SSRF protection: blocked request to '${host}': ${verdict.reason}`);
    }
  },
};

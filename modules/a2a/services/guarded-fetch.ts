/**
 * The fetch the A2A client uses (discovery and every JSON-RPC call): http and
 * https only, no redirects, and SSRF rules — a host that is or resolves to a
 * loopback, private, link-local or otherwise non-public address is refused
 * unless [a2a] allowed_hosts names it. The check runs in the connection's own
 * DNS lookup, so the address checked is the address connected to (no DNS
 * rebinding between check and connect). Bodies stream (SSE for message/stream).
 */
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import ipaddr from 'ipaddr.js';
import { badRequest } from '@talon/module-sdk';

export class OutboundRefused extends Error {
  override name = 'OutboundRefused';
}

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/** 'host' or 'host:port' entries; hosts compare without brackets and case. */
export function hostAllowed(allowed: readonly string[], host: string, port: number): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return allowed.some((entry) => {
    const e = entry.toLowerCase().replace(/^\[|\]$/g, '');
    return e === h || e === `${h}:${port}` || e.replace(/^\[(.*)\](:\d+)$/, '$1$2') === `${h}:${port}`;
  });
}

/** Throws 400 for a URL that is not http(s) or carries credentials, OutboundRefused for a literal non-public IP. */
export function checkUrl(raw: string, allowed: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest(`'${raw}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`only http and https URLs are reached, not '${url.protocol}'`);
  if (url.username || url.password) throw badRequest('URLs with credentials are not reached');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host) && !isPublicAddress(host) && !hostAllowed(allowed, host, port(url))) {
    throw new OutboundRefused(`SSRF protection: ${host} is not a public address (add it to [a2a] allowed_hosts to allow it)`);
  }
  return url;
}

const port = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);

function guardedLookup(url: URL, allowed: readonly string[]): LookupFunction {
  const exempt = hostAllowed(allowed, url.hostname, port(url));
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return (callback as (e: Error) => void)(err);
      const blocked = exempt ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (blocked)
        return (callback as (e: Error) => void)(
          new OutboundRefused(`SSRF protection: ${hostname} resolves to ${blocked.address}, which is not public (add the host to [a2a] allowed_hosts)`),
        );
      if (options.all) return (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

export function guardedFetch(allowedHosts: () => readonly string[], timeoutMs: () => number): typeof fetch {
  return async (input, init = {}) => {
    const request = input instanceof Request ? input : undefined;
    const url = checkUrl(request ? request.url : String(input), allowedHosts());
    const headers = new Headers(init.headers ?? request?.headers);
    const body = init.body ?? (request ? await request.text() : undefined);
    if (body !== undefined && body !== null && typeof body !== 'string') throw new OutboundRefused('only text request bodies are sent');
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs()), ...(init.signal ? [init.signal] : [])]);
    const res = await send(url, init.method ?? request?.method ?? 'GET', headers, body ?? undefined, signal, guardedLookup(url, allowedHosts()));
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const status = res.statusCode ?? 502;
    const noBody = status === 204 || status === 304 || status < 200;
    if (noBody) res.resume();
    return new Response(noBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
      status: Math.max(status, 200),
      statusText: res.statusMessage,
      headers: responseHeaders,
    });
  };
}

function send(
  url: URL,
  method: string,
  headers: Headers,
  body: string | undefined,
  signal: AbortSignal,
  lookup: LookupFunction,
): Promise<http.IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method, headers: Object.fromEntries(headers), lookup, signal }, resolve);
    req.on('error', (err) => reject(signal.aborted ? (signal.reason ?? err) : err));
    req.end(body);
  });
}

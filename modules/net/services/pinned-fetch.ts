/**
 * The HTTP(S) client behind net.fetch: every hop's host is resolved once,
 * each resolved address goes through the SSRF decision, and the connection is
 * pinned to the checked address (a custom lookup), so DNS rebinding between
 * the check and the connect cannot reach another address. Redirects are
 * followed by hand and every hop is checked again.
 */
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { checkAddress, hostAllowListed, originAllowListed, type SsrfAllowList } from './ssrf.ts';

export type Resolve = (host: string) => Promise<Array<{ address: string; family: number }>>;

export interface PinnedFetchOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** A redirect past maxRedirects: refused (false) or handed back unfollowed (true, a fetch with redirect 'manual'). */
  returnLastRedirect?: boolean;
  allow: SsrfAllowList;
  /** Capability check per hop: returns the refusal, or undefined to go on. */
  permitHost?(host: string, port: number): string | undefined;
  signal?: AbortSignal;
  /** DNS resolution (tests may replace it). */
  resolve?: Resolve;
}

export interface PinnedFetchResult {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  finalUrl: string;
}

/** Refusals (SSRF, capability, scheme, size): the message is meant for a person or a model. */
export class FetchRefused extends Error {
  override name = 'FetchRefused';
}

export const defaultResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true });

/** The request and its timeout (and the caller's stop) as one signal; it also ends a body still streaming. */
export function requestSignal(options: { timeoutMs: number; signal?: AbortSignal }): AbortSignal {
  return AbortSignal.any([AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])]);
}

/** Follows the hops to the final response, whose body is still to be read. */
export async function openPinned(options: PinnedFetchOptions, signal: AbortSignal): Promise<{ res: http.IncomingMessage; url: URL }> {
  try {
    return await follow(options, signal);
  } catch (err) {
    // A stop or the timeout may surface as a socket error: report the cause instead.
    throw signal.aborted ? signal.reason : err;
  }
}

export async function pinnedFetch(options: PinnedFetchOptions): Promise<PinnedFetchResult> {
  const signal = requestSignal(options);
  const { res, url } = await openPinned(options, signal);
  try {
    const { data, truncated } = await readCapped(res, options.maxBytes);
    return { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: data, truncated, finalUrl: url.toString() };
  } catch (err) {
    throw signal.aborted ? signal.reason : err;
  }
}

async function follow(options: PinnedFetchOptions, signal: AbortSignal): Promise<{ res: http.IncomingMessage; url: URL }> {
  let url = new URL(options.url);
  let method = (options.method ?? 'GET').toUpperCase();
  let body = options.body;
  for (let hop = 0; ; hop++) {
    const { address, family } = await admit(url, options);
    const res = await send(url, method, options.headers ?? {}, body, address, family, signal);
    const location = res.headers.location;
    if (!res.statusCode || res.statusCode < 300 || res.statusCode >= 400 || !location) return { res, url };
    if (hop >= options.maxRedirects) {
      if (options.returnLastRedirect) return { res, url };
      res.resume();
      throw new FetchRefused(`too many redirects (more than ${options.maxRedirects})`);
    }
    res.resume();
    url = new URL(location, url);
    if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
    }
  }
}

async function admit(url: URL, options: PinnedFetchOptions): Promise<{ address: string; family: number }> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchRefused(`unsupported URL scheme '${url.protocol}' (only http and https)`);
  if (url.username || url.password) throw new FetchRefused('URLs with embedded credentials are not fetched');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const refusal = options.permitHost?.(host, port);
  if (refusal) throw new FetchRefused(refusal);
  const addresses = ipaddr.isValid(host) ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }] : await resolveAll(host, options);
  if (!addresses.length) throw new FetchRefused(`could not resolve host '${host}'`);
  if (!hostAllowListed(host, options.allow) && !originAllowListed(host, port, options.allow)) {
    // Every address must pass: a name with one private address is refused outright.
    for (const a of addresses) {
      const verdict = checkAddress(a.address, options.allow);
      if (!verdict.allowed) throw new FetchRefused(`SSRF protection: blocked request to '${host}': ${verdict.reason}`);
    }
  }
  return addresses[0];
}

async function resolveAll(host: string, options: PinnedFetchOptions) {
  try {
    return await (options.resolve ?? defaultResolve)(host);
  } catch (err) {
    throw new FetchRefused(`could not resolve host '${host}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  address: string,
  family: number,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  const pinned: LookupFunction = (_host, opts, cb) => {
    if (opts.all) (cb as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method,
        headers: { 'user-agent': 'Talon', accept: '*/*', ...headers },
        lookup: pinned,
        signal,
      },
      resolve,
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function readCapped(res: http.IncomingMessage, max: number): Promise<{ data: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    res.on('data', (c: Buffer) => {
      if (truncated) return;
      chunks.push(c.length > max - size ? c.subarray(0, max - size) : c);
      size += c.length;
      // A byte past the cap was dropped (in this chunk or a later one): stop reading, the rest is not wanted.
      if (size > max) {
        truncated = true;
        // Settled first: destroying emits 'aborted', which must not turn the capped body into a failure.
        resolve({ data: Buffer.concat(chunks), truncated });
        res.destroy();
      }
    });
    res.on('end', () => resolve({ data: Buffer.concat(chunks), truncated }));
    res.on('error', (e) => (truncated ? undefined : reject(e)));
    res.on('aborted', () => reject(new Error('connection aborted')));
  });
}

/**
 * HTTP(S) client for web_fetch: every hop's host is resolved once, each
 * resolved address goes through the SSRF decision, and the connection is
 * pinned to the checked address (a custom lookup), so DNS rebinding between
 * the check and the connect cannot reach another address. Redirects are
 * followed by hand and every hop is checked again.
 */
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { checkAddress, hostAllowListed, type SsrfAllowList } from './ssrf.ts';

export interface PinnedFetchOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  allow: SsrfAllowList;
  /** Capability check per hop: returns the refusal, or undefined to go on. */
  permitHost(host: string, port: number): string | undefined;
  signal?: AbortSignal;
  /** DNS resolution (tests may replace it). */
  resolve?: (host: string) => Promise<Array<{ address: string; family: number }>>;
}

export interface PinnedFetchResult {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  finalUrl: string;
}

/** Refusals (SSRF, capability, scheme): the message is meant for the model. */
export class FetchRefused extends Error {
  override name = 'FetchRefused';
}

const defaultResolve = (host: string) => dnsLookup(host, { all: true, verbatim: true });

export async function pinnedFetch(options: PinnedFetchOptions): Promise<PinnedFetchResult> {
  const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
  const signal = AbortSignal.any(signals);
  try {
    return await follow(options, signal);
  } catch (err) {
    // A stop or the timeout may surface as a socket error mid-body: report the cause instead.
    throw signal.aborted ? signal.reason : err;
  }
}

async function follow(options: PinnedFetchOptions, signal: AbortSignal): Promise<PinnedFetchResult> {
  let url = new URL(options.url);
  let method = (options.method ?? 'GET').toUpperCase();
  let body = options.body;
  for (let hop = 0; ; hop++) {
    const { address, family } = await admit(url, options);
    const res = await send(url, method, options.headers ?? {}, body, address, family, signal);
    const location = res.headers.location;
    if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location) {
      res.resume();
      if (hop >= options.maxRedirects) throw new FetchRefused(`too many redirects (more than ${options.maxRedirects})`);
      url = new URL(location, url);
      if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      continue;
    }
    const { data, truncated } = await readCapped(res, options.maxBytes);
    return { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: data, truncated, finalUrl: url.toString() };
  }
}

async function admit(url: URL, options: PinnedFetchOptions): Promise<{ address: string; family: number }> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchRefused(`unsupported URL scheme '${url.protocol}' (only http and https)`);
  if (url.username || url.password) throw new FetchRefused('URLs with embedded credentials are not fetched');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const refusal = options.permitHost(host, port);
  if (refusal) throw new FetchRefused(refusal);
  const addresses = ipaddr.isValid(host) ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }] : await resolveAll(host, options);
  if (!addresses.length) throw new FetchRefused(`could not resolve host '${host}'`);
  if (!hostAllowListed(host, options.allow)) {
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
  body: string | undefined,
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
        headers: { 'user-agent': 'Talon-web_fetch/0.1', accept: '*/*', ...headers },
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
      if (size >= max) {
        truncated = true;
        res.destroy();
        resolve({ data: Buffer.concat(chunks), truncated });
        return;
      }
      const part = c.length > max - size ? c.subarray(0, max - size) : c;
      chunks.push(part);
      size += part.length;
    });
    res.on('end', () => resolve({ data: Buffer.concat(chunks), truncated }));
    res.on('error', (e) => (truncated ? undefined : reject(e)));
    res.on('aborted', () => reject(new Error('connection aborted')));
  });
}

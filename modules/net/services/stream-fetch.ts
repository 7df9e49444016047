/**
 * net.webFetch: the pinned, SSRF-checked client behind the signature of the global fetch, for SDK clients that take
 * a fetch function (the A2A client). The body streams (server-sent events) and errors once it passes the cap; the
 * request's time limit covers the body too.
 */
import type http from 'node:http';
import { Readable, Transform } from 'node:stream';
import type { NetStreamPolicy } from '@talon/net';
import { FetchRefused, openPinned, requestSignal, type Resolve } from './pinned-fetch.ts';
import { allowList } from './allow.ts';

const NO_BODY = new Set([101, 204, 205, 304]);

export async function streamFetch(input: string | URL | Request, init: RequestInit = {}, policy: NetStreamPolicy, resolve?: Resolve): Promise<Response> {
  const request = input instanceof Request ? input : undefined;
  const url = request ? request.url : String(input);
  const headers = new Headers(init.headers ?? request?.headers);
  const body = init.body ?? (request ? await request.text() : undefined);
  if (body !== undefined && body !== null && typeof body !== 'string') throw new FetchRefused('only text request bodies are sent');
  const signal = requestSignal({ timeoutMs: policy.timeoutMs, signal: init.signal ?? undefined });
  const { res } = await openPinned(
    {
      url,
      method: init.method ?? request?.method ?? 'GET',
      headers: Object.fromEntries(headers),
      body: body ?? undefined,
      timeoutMs: policy.timeoutMs,
      maxBytes: policy.maxBytes,
      maxRedirects: policy.maxRedirects ?? 0,
      returnLastRedirect: true,
      allow: allowList(policy),
      resolve,
    },
    signal,
  );
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const status = res.statusCode ?? 502;
  const noBody = NO_BODY.has(status) || status < 200;
  if (noBody) res.resume();
  // The Response constructor takes 200..599 only: an informational status cannot be handed on as itself.
  return new Response(noBody ? null : capped(res, policy.maxBytes, signal), {
    status: Math.max(status, 200),
    statusText: res.statusMessage,
    headers: responseHeaders,
  });
}

/** The body as a web stream that errors past max bytes (and with the timeout's reason once it fires). */
function capped(res: http.IncomingMessage, max: number, signal: AbortSignal): ReadableStream<Uint8Array> {
  let size = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > max) {
        res.destroy();
        return done(new FetchRefused(`response body larger than ${max} bytes`));
      }
      done(null, chunk);
    },
  });
  res.on('error', (err) => limit.destroy(signal.aborted ? (signal.reason as Error) : err));
  return Readable.toWeb(res.pipe(limit)) as ReadableStream<Uint8Array>;
}

/**
 * Calls of the Graph API through the context's net fetch (its SSRF policy; the configured api_url's origin is the only
 * private address it may reach), with the access token as a Bearer header. Every failure is a ChannelError; no
 * message carries the token (Graph's own messages never do, and ours name none).
 */
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { channelError, toChannelError } from './errors.ts';

const TIMEOUT_MS = 30_000;
/** Graph's JSON answers are small; a bigger one is not Graph. */
const JSON_MAX_BYTES = 1024 * 1024;

export interface Graph {
  ctx: AdapterContext;
  kit: ChannelKit;
  /** The Graph root with its version, without a trailing slash. */
  root: string;
  token: string;
}

export interface GraphBody {
  /** A JSON object, or multipart bytes with their content-type. */
  json?: unknown;
  bytes?: { data: Uint8Array; contentType: string };
}

/** One Graph call at `path` (below the root) or an absolute URL; resolves with the JSON answer. */
export async function graphCall(graph: Graph, method: 'GET' | 'POST', path: string, body: GraphBody = {}): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { authorization: `Bearer ${graph.token}` };
  let payload: string | Uint8Array | undefined;
  if (body.json !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body.json);
  } else if (body.bytes) {
    headers['content-type'] = body.bytes.contentType;
    payload = body.bytes.data;
  }
  const res = await graph.ctx
    .fetch({
      url: `${graph.root}${path}`,
      method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
      timeoutMs: TIMEOUT_MS,
      maxBytes: JSON_MAX_BYTES,
      maxRedirects: 0,
      signal: graph.ctx.signal,
    })
    .catch((err: unknown) => {
      throw channelError('transient', `whatsapp: ${err instanceof Error ? err.message : String(err)}`);
    });
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (res.status < 200 || res.status >= 300) {
    const header = res.headers['retry-after'];
    throw toChannelError(res.status, parsed, graph.kit.retryAfterMs(Array.isArray(header) ? header[0] : header, Date.now()));
  }
  if (typeof parsed !== 'object' || parsed === null) throw channelError('transient', `whatsapp: ${path} answered something other than JSON`);
  return parsed as Record<string, unknown>;
}

/** A multipart body (FormData encoded by undici's Request), for the media upload. */
export async function multipart(fields: Record<string, string>, file: { name: string; type: string; data: Uint8Array }): Promise<GraphBody['bytes']> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  form.set('file', new Blob([new Uint8Array(file.data)], { type: file.type }), file.name);
  const request = new Request('http://multipart.invalid/', { method: 'POST', body: form });
  return { data: new Uint8Array(await request.arrayBuffer()), contentType: request.headers.get('content-type')! };
}

/**
 * The daemon's event stream (`GET /api/v1/events?account=<number>`, server-sent events), one connection of the kit's
 * reconnect loop, read through net's streaming fetch. Each `receive` event is one envelope; the stream is ready when
 * the daemon answers 200 with text/event-stream (it flushes its headers at once; any other 200 is a failure named by
 * what came back) and alive while its 15 s keep-alive comments come.
 *
 * Acknowledgement: signal-cli acknowledges a message to Signal's servers itself when it hands it to its subscribers;
 * there is no later acknowledgement a client could hold back. So a message is handed to the journal before the next
 * event is read, and a failed commit is retried here (with backoff, the stream held and kept alive) rather than
 * dropped. While no stream is connected the daemon, run with --receive-mode=manual, does not receive at all, and
 * Signal's servers keep the messages until the adapter subscribes again.
 */
import type * as EventSourceParser from 'eventsource-parser';
import { lazyRequire } from '@talon/module-sdk';
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { envelopeOf, toInbound, type Envelope } from './inbound.ts';
import { channelError, unexpectedAnswer, type SignalRpc } from './rpc.ts';

export type ReconnectLink = Parameters<ConstructorParameters<ChannelKit['Reconnector']>[0]['connect']>[0];
export type StreamFetch = (
  url: string,
  init: RequestInit,
  policy: { allowOrigins: readonly string[]; timeoutMs: number; maxBytes: number },
) => Promise<Response>;

// Loaded when a stream is read: a module switched off loads no package (docs/modules.md).
const sse = lazyRequire<typeof EventSourceParser>(import.meta.url, 'eventsource-parser');

/** One stream's longest life and size; the loop subscribes again after it. */
const STREAM_MS = 30 * 60_000;
const STREAM_MAX_BYTES = 512 * 1024 * 1024;
/** How long the first bytes of a wrong answer are waited for, to name them in last_error. */
const FIRST_BYTES_WAIT_MS = 2_000;

export interface EventDeps {
  ctx: AdapterContext;
  kit: ChannelKit;
  rpc: SignalRpc;
  stream: StreamFetch;
  root: string;
  number: string;
  token?: string;
}

export async function readEvents(link: ReconnectLink, d: EventDeps): Promise<void> {
  const url = `${d.root}/api/v1/events?${new URLSearchParams({ account: d.number }).toString()}`;
  const res = await d.stream(
    url,
    { headers: { accept: 'text/event-stream', ...(d.token ? { authorization: `Bearer ${d.token}` } : {}) }, signal: link.signal },
    { allowOrigins: d.ctx.allowOrigins, timeoutMs: STREAM_MS, maxBytes: STREAM_MAX_BYTES },
  );
  if (res.status === 401 || res.status === 403) throw channelError(`the signal-cli daemon (or its proxy) refused the token (HTTP ${res.status})`, 'auth');
  // A multi-account daemon answers 400 for an account it does not have.
  if (res.status === 400) throw channelError(`the signal-cli daemon has no account ${d.number} (register or link it first)`, 'auth');
  if (res.status !== 200 || !res.body) throw channelError(`signal-cli events: HTTP ${res.status}`, 'transient');
  // Anything else answering 200 is not ready: it fails, backing off (and shown), rather than counting as connected.
  const type = res.headers.get('content-type') ?? undefined;
  if (!/^text\/event-stream\b/i.test(type ?? '')) throw unexpectedAnswer('signal-cli events', type, await firstBytes(res.body), d.token);
  link.ready();
  d.ctx.report('connected');

  const decoder = new TextDecoder();
  // The parser calls back synchronously while fed: the events of a chunk are collected, then delivered in order.
  let received: string[] = [];
  const parser = sse().createParser({ onEvent: (event) => void (event.event === 'receive' && received.push(event.data)) });
  for await (const bytes of res.body) {
    link.traffic();
    parser.feed(decoder.decode(bytes, { stream: true }));
    const batch = received;
    received = [];
    for (const data of batch) {
      const envelope = envelopeOf(data);
      if (envelope) await deliver(envelope, link, d);
    }
  }
}

/** The first bytes of an answer that is not the stream expected, waiting for them briefly; the body is then dropped. */
async function firstBytes(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const first = await Promise.race([reader.read(), new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), FIRST_BYTES_WAIT_MS)))]);
    return first?.value ?? new Uint8Array();
  } catch {
    return new Uint8Array();
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => undefined);
  }
}

/**
 * Hands one envelope to the journal, retrying a failed commit (or attachment download) until it holds or the adapter
 * stops; while it fails the channel shows `connecting` with the error as last_error, and `connected` again after.
 */
async function deliver(envelope: Envelope, link: ReconnectLink, d: EventDeps): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const message = await toInbound(envelope, d);
      if (message) await d.ctx.emit(message);
      if (attempt > 0) d.ctx.report('connected');
      return;
    } catch (err) {
      if (d.ctx.signal.aborted) throw err;
      const error = (err as Error).message;
      d.ctx.log.warn({ error, attempt }, 'signal message not committed yet; retrying (the daemon cannot deliver it again)');
      if (attempt === 0) d.ctx.report('connecting', `a received message is not committed yet: ${error}`);
      link.traffic();
      await d.kit.sleep(d.kit.backoffDelay(attempt, 500, 10_000, Math.random) + 100, d.kit.systemTimers, d.ctx.signal);
      link.traffic();
    }
  }
}

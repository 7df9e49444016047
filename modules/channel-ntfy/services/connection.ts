/**
 * One ntfy channel: the topics' JSON stream (`GET /<topics>/json?since=<cursor>`) read inside the channels kit's
 * reconnect loop, and replies published by `POST /<topic>`. The stream is read one event at a time: a message is handed
 * to the journal and only once `emit` resolved does the cursor move to its id (kept in the module's table), so a
 * process killed in between subscribes again from the message before and the journal drops what it had already.
 * Before the first message, the cursor is the server's time of the first subscription (ntfy takes a unix time as
 * `since` too). Ready is the stream's `open` event (a 200 that does not start with it is a failure named by what came
 * back); liveness is any event (ntfy sends a keepalive every 45 s). The stream goes through the net module's streaming
 * fetch with the configured server's origin exempted; net ends a stream after streamMs, and the loop subscribes again
 * from the cursor.
 */
import type { AdapterContext, ChannelConnection, ChannelKit, OutboundChunk } from '@talon/channels';
import type { NetStreamPolicy } from '@talon/net';
import { TOPIC, type NtfySettings } from '../config.ts';
import type { Cursor } from './cursor.ts';
import { channelError, isAuthError, unexpectedAnswer } from './errors.ts';
import { parseEvent, REPLY_TAG, toInbound } from './messages.ts';

export type StreamFetch = (url: string, init: RequestInit, policy: NetStreamPolicy) => Promise<Response>;

export interface NtfyTuning {
  /** A stream with no event for this long is rebuilt (three of ntfy's 45 s keepalives by default). */
  livenessMs: number;
  /** One subscription's longest life (net's cap on a streamed request); the next one starts from the cursor. */
  streamMs: number;
}

/** A subscription's bytes before net ends it (the loop resubscribes from the cursor). */
const STREAM_MAX_BYTES = 32 * 1024 * 1024;
const PUBLISH_TIMEOUT_MS = 15_000;
const ANSWER_MAX_BYTES = 64 * 1024;
/** ntfy's first line (the open event) is short: this much without it is not ntfy's stream. */
const FIRST_LINE_MAX = 4096;
const topicName = new RegExp(`^${TOPIC}$`);

/** The ChannelError for an HTTP status ntfy answered with (its body's `error` says why; it never holds the token). */
function statusError(status: number, body: string, retryAfter: number | undefined): Error {
  let reason = `HTTP ${status}`;
  try {
    const e = (JSON.parse(body) as { error?: unknown }).error;
    if (typeof e === 'string') reason += `: ${e.slice(0, 200)}`;
  } catch {
    // Not ntfy's JSON error: the status says enough.
  }
  if (status === 401 || status === 403) return channelError('auth', `the ntfy server refused the access token (${reason})`);
  if (status === 429) return Object.assign(channelError('rate_limited', `ntfy: ${reason}`), { retryAfterMs: retryAfter ?? 1000 });
  return channelError(status >= 500 ? 'transient' : 'permanent', `ntfy: ${reason}`);
}

/** The id of the message a publish answered with (ntfy answers the message as JSON); undefined when it is not that. */
function publishedId(body: string): string | undefined {
  try {
    const id = (JSON.parse(body) as { id?: unknown } | null)?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

export function startNtfy(
  ctx: AdapterContext,
  settings: NtfySettings,
  kit: ChannelKit,
  stream: StreamFetch,
  cursor: Cursor,
  tuning: NtfyTuning,
): ChannelConnection {
  const auth: Record<string, string> = settings.token ? { authorization: `Bearer ${settings.token}` } : {};
  let since: string | undefined;
  let loaded = false;

  const connect = async (link: { ready(): void; traffic(): void; signal: AbortSignal }) => {
    if (!loaded) {
      since = await cursor.get(ctx.channel);
      loaded = true;
    }
    const url = `${settings.server}/${settings.topics.join(',')}/json${since ? `?since=${encodeURIComponent(since)}` : ''}`;
    const res = await stream(
      url,
      { headers: auth, signal: link.signal },
      { allowOrigins: ctx.allowOrigins, timeoutMs: tuning.streamMs, maxBytes: STREAM_MAX_BYTES },
    );
    if (!res.ok || !res.body) throw statusError(res.status, await res.text().catch(() => ''), kit.retryAfterMs(res.headers.get('retry-after'), Date.now()));
    // ntfy's stream starts with its `open` event: anything else answering 200 fails here, before ready, and backs off.
    const notNtfy = (start: string) => unexpectedAnswer('ntfy subscription', res.headers.get('content-type'), start, settings.token);
    const decoder = new TextDecoder();
    let buffered = '';
    let opened = false;
    for await (const bytes of res.body) {
      buffered += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, end).trim();
        buffered = buffered.slice(end + 1);
        if (!line) continue;
        if (!opened && parseEvent(line)?.event !== 'open') throw notNtfy(line);
        opened = true;
        await handle(line, link);
      }
      if (!opened && buffered.length > FIRST_LINE_MAX) throw notNtfy(buffered);
    }
    if (!opened) throw notNtfy(buffered);
  };

  const handle = async (line: string, link: { ready(): void; traffic(): void }) => {
    const e = parseEvent(line);
    if (!e) return;
    link.traffic();
    if (e.event === 'open') {
      if (!since) {
        since = String(e.time);
        await cursor.set(ctx.channel, since);
      }
      link.ready();
      ctx.report('connected');
    } else if (e.event === 'message') {
      const message = toInbound(e);
      // A failed commit throws out of the stream: the loop subscribes again from the cursor, before this message.
      if (message) await ctx.emit(message);
      since = e.id;
      await cursor.set(ctx.channel, e.id);
    }
  };

  const loop = new kit.Reconnector({
    connect,
    teardown: () => undefined, // the stream is cancelled by the link's signal
    isAuthError,
    livenessMs: tuning.livenessMs,
    signal: ctx.signal,
    onState(health) {
      if (health.state === 'stopped') ctx.report('error', health.lastError ?? 'stopped');
      else if (health.state === 'waiting') ctx.report('connecting', health.lastError ?? undefined);
    },
  });
  const running = loop.run();

  return {
    // The reply's tag marks it as the bot's, so the stream that brings it back skips it.
    async send(chunk: OutboundChunk) {
      if (!topicName.test(chunk.chatId)) throw channelError('permanent', `'${chunk.chatId.slice(0, 80)}' is no ntfy topic name`);
      let res;
      try {
        res = await ctx.fetch({
          url: `${settings.server}/${chunk.chatId}`,
          method: 'POST',
          headers: { ...auth, 'content-type': 'text/plain; charset=utf-8', 'x-tags': REPLY_TAG },
          body: chunk.text,
          timeoutMs: PUBLISH_TIMEOUT_MS,
          maxBytes: ANSWER_MAX_BYTES,
          signal: ctx.signal,
        });
      } catch (err) {
        throw channelError('transient', `ntfy: ${(err as Error).message}`);
      }
      const body = res.body.toString('utf8');
      const retryAfter = res.headers['retry-after'];
      if (res.status !== 200) throw statusError(res.status, body, kit.retryAfterMs(typeof retryAfter === 'string' ? retryAfter : undefined, Date.now()));
      const id = publishedId(body);
      if (id === undefined) throw unexpectedAnswer('ntfy publish', String(res.headers['content-type'] ?? ''), body, settings.token);
      return { messageId: id };
    },
    async stop() {
      await running;
    },
  };
}

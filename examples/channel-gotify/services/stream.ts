/**
 * Inbound: Gotify's client WebSocket `/stream`, which pushes every message of the user's applications as JSON. Gotify
 * has no acknowledgement and no redelivery, so this adapter keeps a watermark, the highest message id the journal has
 * committed: after each (re)connect it first reads what it missed with GET /message and hands it to the journal in id
 * order, then the stream's messages. A message is past the watermark only once `emit` resolved; a failed commit closes
 * the connection, and the next one's catch-up reads the message again (the journal drops any copy by its id).
 *
 * The WebSocket is opened by the `ws` library, not the net module's fetch: only to the configured server's host.
 */
import WebSocket from 'ws';
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { channelError, type GotifyMessage, type GotifyRest } from './rest.ts';
import { toInbound, type Audience } from './inbound.ts';

type ReconnectLink = Parameters<ConstructorParameters<ChannelKit['Reconnector']>[0]['connect']>[0];

/** Messages read back per page after a reconnect, and the pages at most (older ones are left unanswered). */
const PAGE = 100;
const MAX_PAGES = 10;

export interface StreamOptions {
  ctx: AdapterContext;
  rest: GotifyRest;
  clientToken: string;
  /**
   * Checks the tokens and answers the id of the application replies are posted as (its own messages come back on the
   * stream and are ignored); called at every connection.
   */
  identify(): Promise<number>;
  audience: Audience;
  /** At the first connection, messages this young are caught up (0: none). */
  catchUpMs: number;
}

export class GotifyStream {
  /** The highest message id committed to the journal (or deliberately skipped at the first connection). */
  private watermark: number | undefined;
  private socket: WebSocket | undefined;
  private ownAppId: number | undefined;

  constructor(private readonly o: StreamOptions) {}

  /** One connection for the kit's reconnect loop: settles when the socket closes. */
  async connect(link: ReconnectLink): Promise<void> {
    this.ownAppId = await this.o.identify();
    const url = new URL('stream', this.o.rest.root.replace(/^http/, 'ws') + '/');
    const ws = new WebSocket(url, { headers: { 'x-gotify-key': this.o.clientToken }, handshakeTimeout: 15_000, maxPayload: 4 * 1024 * 1024 });
    this.socket = ws;
    // One queue: the catch-up first, then the stream's messages, each committed before the next.
    let work: Promise<void> = Promise.resolve();
    const then = (step: () => Promise<void>) => {
      work = work.then(step).catch((err: unknown) => {
        this.o.ctx.log.warn({ error: (err as Error).message }, 'gotify: a message was not committed; reading it again after a reconnect');
        ws.terminate();
      });
    };
    return new Promise<void>((resolve, reject) => {
      ws.on('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        reject(channelError(`gotify refused the stream with ${status}`, status === 401 || status === 403 ? 'auth' : 'transient'));
        ws.terminate();
      });
      ws.on('open', () => {
        link.ready();
        link.traffic();
        then(() => this.catchUp());
      });
      // Gotify pings every 45 s (its stream.pingperiodseconds): traffic that proves the connection is alive.
      ws.on('ping', () => link.traffic());
      ws.on('message', (data) => {
        link.traffic();
        const message = parse(data.toString());
        if (message) then(() => this.take(message));
      });
      ws.on('error', reject);
      ws.on('close', () => void work.then(() => resolve()));
      link.signal.addEventListener('abort', () => ws.terminate(), { once: true });
    });
  }

  /** Closes the socket of the connection that ended (the loop's teardown). */
  close(): void {
    this.socket?.terminate();
    this.socket = undefined;
  }

  /** What came while no socket was open (or, at the first connection, the last catch_up_minutes), oldest first. */
  private async catchUp(): Promise<void> {
    const since = this.watermark;
    const missed: GotifyMessage[] = [];
    let newest = since ?? 0;
    let before: number | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const messages = await this.o.rest.recent(this.o.clientToken, PAGE, before);
      for (const m of messages) {
        newest = Math.max(newest, m.id);
        const wanted = since !== undefined ? m.id > since : Date.parse(m.date) >= Date.now() - this.o.catchUpMs;
        if (wanted) missed.push(m);
      }
      const oldest = messages.at(-1);
      if (!oldest || messages.length < PAGE) break;
      if (since !== undefined ? oldest.id <= since : Date.parse(oldest.date) < Date.now() - this.o.catchUpMs) break;
      before = oldest.id;
    }
    for (const m of missed.sort((a, b) => a.id - b.id)) await this.take(m);
    // At the first connection, what was older than the window is skipped for good.
    this.watermark = Math.max(this.watermark ?? 0, newest);
  }

  private async take(m: GotifyMessage): Promise<void> {
    if (this.watermark !== undefined && m.id <= this.watermark) return;
    const inbound = m.appid === this.ownAppId ? undefined : toInbound(m, this.o.audience);
    if (inbound) await this.o.ctx.emit(inbound);
    this.watermark = Math.max(this.watermark ?? 0, m.id);
  }
}

function parse(text: string): GotifyMessage | undefined {
  try {
    const m = JSON.parse(text) as Partial<GotifyMessage>;
    return typeof m.id === 'number' && typeof m.appid === 'number' && typeof m.message === 'string' && typeof m.date === 'string'
      ? (m as GotifyMessage)
      : undefined;
  } catch {
    return undefined;
  }
}

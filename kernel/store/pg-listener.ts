import pg from 'pg';

/** The first wait before connecting again after a drop; it doubles at each failure, up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;
/** How long connecting, or the liveness check, may take before the attempt counts as failed. */
const ANSWER_MS = 10_000;

export interface PgListenerOptions {
  /** The store's URL (postgres://…). */
  url: string;
  /** The name LISTENed to, a plain identifier (it is written into the statement). */
  name: string;
  /** Shown in pg_stat_activity, one per node: an operator (or a test) can tell whose listener a backend is. */
  applicationName: string;
  /** A notification's payload, in the order the notifying transactions committed. */
  onNotify: (payload: string) => void;
  /** Listening again after the connection was lost: what was notified meanwhile never arrives. */
  onReconnect: () => void;
  /** The connection was lost (or could not be made at start): called once per outage, not at each retry. */
  onDown: (err: Error) => void;
  /** Listening again after an outage of `downMs`. */
  onUp: (downMs: number) => void;
}

/**
 * LISTEN on a connection of its own: a pooled connection goes back to the pool and with it the LISTEN. When the
 * connection drops (the server restarted, the network failed, the backend was terminated) it connects again with a
 * growing wait (at most MAX_RETRY_MS), for as long as it is not stopped; it never throws.
 */
export class PgListener {
  /** The connection being made or in use; a client that is no longer this one is ignored when it fails. */
  private client?: pg.Client;
  private listening = false;
  private stopped = false;
  private retryMs = FIRST_RETRY_MS;
  private retry?: NodeJS.Timeout;
  /** Since when there is no listening connection, once one was lost. */
  private downSince?: number;

  constructor(private readonly options: PgListenerOptions) {}

  /** Connects and listens; when that fails the outage is reported and connecting goes on in the background. */
  start(): Promise<void> {
    return this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => undefined);
  }

  /**
   * Asks the connection for an answer: a network that dropped without a word (no reset, no FIN) leaves a socket that
   * looks open and never delivers again. One that does not answer in ANSWER_MS is dropped and made again.
   */
  async check(): Promise<void> {
    const client = this.client;
    if (!client || !this.listening) return;
    const timer = setTimeout(() => this.lost(client, new Error(`no answer in ${ANSWER_MS} ms`)), ANSWER_MS);
    try {
      await client.query('SELECT 1');
    } catch (err) {
      this.lost(client, err);
    } finally {
      clearTimeout(timer);
    }
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const { url, name, applicationName } = this.options;
    const client = new pg.Client({
      connectionString: url,
      application_name: applicationName,
      connectionTimeoutMillis: ANSWER_MS,
      keepAlive: true,
    });
    this.client = client;
    // Without an 'error' listener a dropped connection's error would end the process.
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the server closed the connection')));
    client.on('notification', (message) => {
      // The client listens to this one name only, so every notification it gets is one of it.
      if (client === this.client && message.payload !== undefined) this.options.onNotify(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${name}`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (client !== this.client) return;
    this.listening = true;
    this.retryMs = FIRST_RETRY_MS;
    const since = this.downSince;
    this.downSince = undefined;
    if (since === undefined) return;
    this.options.onUp(Date.now() - since);
    this.options.onReconnect();
  }

  /** The connection `client` failed: it is closed and, unless the listener stopped, made again after a wait. */
  private lost(client: pg.Client, err: unknown): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.listening = false;
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    if (this.downSince === undefined) {
      this.downSince = Date.now();
      this.options.onDown(err instanceof Error ? err : new Error(String(err)));
    }
    this.retry = setTimeout(() => void this.connect(), this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(2 * this.retryMs, MAX_RETRY_MS);
  }
}

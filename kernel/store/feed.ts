import type { Queries, Store, TalonEvent } from '@talon/module-sdk';

const TABLES = [
  `CREATE TABLE IF NOT EXISTS kernel_changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    node TEXT NOT NULL,
    module TEXT NOT NULL,
    topic TEXT NOT NULL,
    key TEXT NOT NULL,
    at INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS kernel_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, node TEXT NOT NULL, event TEXT NOT NULL, at INTEGER NOT NULL
  )`,
];

/** Rows older than this are pruned: a process that did not read them by then was not running. */
const KEEP_MS = 10 * 60_000;
const PRUNE_EVERY_MS = 60_000;

type ChangeHandler = (key: string) => unknown;
/**
 * The notes of one module are handled one after another, in the order they were written (a module may note its rows
 * before the folder that uses them); a slow handler holds up only its own module, never the feed.
 */
type Listener = { module: string; handler: ChangeHandler };

/**
 * What other processes on the database did: the change feed (kernel_changes, "the rows behind this cache changed")
 * and the events they published (kernel_events). Polled every `pollMs`; on SQLite `PRAGMA data_version` tells at
 * almost no cost whether any other connection wrote, so an idle poll reads no table.
 */
export class Feed {
  private timer?: NodeJS.Timeout;
  private lastChange = 0;
  private lastEvent = 0;
  private dataVersion = -1;
  private lastPrune = 0;
  private polling = false;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Events waiting to be shared, written together right after the current I/O callback. */
  private outbox: string[] = [];

  constructor(
    private readonly store: Store,
    private readonly node: string,
    private readonly pollMs: number,
    private readonly deliver: (event: TalonEvent) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  async start(): Promise<void> {
    for (const table of TABLES) await this.store.exec(table);
    this.lastChange =
      (await this.store.one<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM kernel_changes'))?.seq ?? 0;
    this.lastEvent =
      (await this.store.one<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM kernel_events'))?.seq ?? 0;
    this.timer = setInterval(() => void this.poll().catch(this.onError), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  async note(module: string, topic: string, key: string, t: Queries = this.store): Promise<void> {
    await t.run('INSERT INTO kernel_changes (node, module, topic, key, at) VALUES (?, ?, ?, ?, ?)', [
      this.node,
      module,
      topic,
      key,
      Date.now(),
    ]);
  }

  on(module: string, topic: string, handler: ChangeHandler): () => void {
    const name = `${module}\u0000${topic}`;
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    const listener = { module, handler };
    set.add(listener);
    return () => void set.delete(listener);
  }

  /** Shares an event published here with the other processes: the events of one I/O callback go in one transaction. */
  publish(event: TalonEvent): void {
    if (!this.outbox.length) setImmediate(() => void this.flushOutbox());
    this.outbox.push(JSON.stringify(event));
  }

  private async flushOutbox(): Promise<void> {
    const events = this.outbox;
    this.outbox = [];
    const at = Date.now();
    try {
      await this.store.tx(async (t) => {
        for (const event of events)
          await t.run('INSERT INTO kernel_events (node, event, at) VALUES (?, ?, ?)', [this.node, event, at]);
      });
    } catch (err) {
      this.onError(err);
    }
  }

  /** Reads what other processes wrote since the last poll (also called directly by tests and at a beat). */
  async poll(): Promise<void> {
    if (this.polling || !this.timer) return;
    this.polling = true;
    try {
      if (this.changed()) {
        await this.readChanges();
        await this.readEvents();
      }
      if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) await this.prune();
    } finally {
      this.polling = false;
    }
  }

  /** Whether another connection committed since the last look (SQLite; always true elsewhere). */
  private changed(): boolean {
    if (this.store.dialect !== 'sqlite') return true;
    const version = this.store.sqlite().pragma('data_version', { simple: true }) as number;
    if (version === this.dataVersion) return false;
    this.dataVersion = version;
    return true;
  }

  private async readChanges(): Promise<void> {
    const rows = await this.store.many<{ seq: number; node: string; module: string; topic: string; key: string }>(
      'SELECT seq, node, module, topic, key FROM kernel_changes WHERE seq > ? ORDER BY seq',
      [this.lastChange],
    );
    for (const row of rows) {
      this.lastChange = row.seq;
      if (row.node === this.node) continue;
      for (const { module, handler } of this.listeners.get(`${row.module}\u0000${row.topic}`) ?? []) {
        const chain = (this.chains.get(module) ?? Promise.resolve()).then(() => handler(row.key)).catch(this.onError);
        this.chains.set(module, chain);
      }
    }
  }

  private async readEvents(): Promise<void> {
    const rows = await this.store.many<{ seq: number; node: string; event: string }>(
      'SELECT seq, node, event FROM kernel_events WHERE seq > ? ORDER BY seq',
      [this.lastEvent],
    );
    for (const row of rows) {
      this.lastEvent = row.seq;
      if (row.node !== this.node) this.deliver(JSON.parse(row.event) as TalonEvent);
    }
  }

  private async prune(): Promise<void> {
    this.lastPrune = Date.now();
    const before = this.lastPrune - KEEP_MS;
    await this.store.run('DELETE FROM kernel_changes WHERE at < ?', [before]);
    await this.store.run('DELETE FROM kernel_events WHERE at < ?', [before]);
  }
}

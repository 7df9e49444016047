import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { NodeInfo, Store } from '@talon/module-sdk';
import { createTables, type TableDdl } from './schema.ts';

export const NODE_TABLES: TableDdl = {
  sqlite: [
    `CREATE TABLE IF NOT EXISTS kernel_nodes (
  id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, listen TEXT, boot_at INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL, state TEXT NOT NULL CHECK (state IN ('live', 'stopped', 'dead'))
)`,
  ],
  postgres: [
    `CREATE TABLE IF NOT EXISTS kernel_nodes (
  id TEXT PRIMARY KEY, pid BIGINT NOT NULL, host TEXT NOT NULL, listen TEXT, boot_at BIGINT NOT NULL,
  heartbeat_at BIGINT NOT NULL, state TEXT NOT NULL CHECK (state IN ('live', 'stopped', 'dead'))
)`,
  ],
};

/**
 * A starting process beats this far ahead (five minutes): loading and migrating modules can hold its event loop past
 * three beats (a fresh clone compiles every module first), and a process found dead while it starts would stop. Once
 * it listens it beats with the present time.
 */
const BOOT_GRACE_MS = 300_000;

/** Rows of gone nodes are kept this long (their claims are taken over long before). */
const FORGET_AFTER_MS = 24 * 3600_000;

type DeadHandler = { fn: (nodeId: string) => unknown; done: Set<string>; run: (work: Promise<unknown>) => void };

/**
 * This process as a row of kernel_nodes, with a heartbeat. A node that misses three beats is marked dead by whichever
 * live node notices first; every live node then calls its handlers for it, so each module takes over what the node
 * had claimed (one conditional update wins). A node that stopped cleanly is handed over the same way: whatever it left
 * claimed is taken over.
 */
export class NodeRegistry {
  readonly id = randomUUID();
  private timer?: NodeJS.Timeout;
  private liveIds: string[] = [];
  private gone: string[] = [];
  private readonly handlers = new Set<DeadHandler>();
  private booting = true;
  /** When this node's own beats were last found on time again (see steady). */
  private steadySince?: number;
  private lastBeat?: number;

  constructor(
    private readonly store: Store,
    readonly beatMs: number,
    private readonly onError: (err: unknown) => void,
    /** This node was found dead by another process, which took over its claims: it must stop claiming (see beat). */
    private readonly onFenced: () => void,
  ) {}

  get leaseMs(): number {
    return this.beatMs * 3;
  }

  /** Whether this node beats: false before start, once stopped or silenced (killed, in tests; fenced). */
  get active(): boolean {
    return this.timer !== undefined;
  }

  /** Whether another process was live at the last beat (cross-process events are written only then). */
  get alone(): boolean {
    return this.liveIds.length <= 1;
  }

  async start(listen: string): Promise<void> {
    await createTables(this.store, NODE_TABLES);
    const now = Date.now();
    await this.store.run(
      'INSERT INTO kernel_nodes (id, pid, host, listen, boot_at, heartbeat_at, state) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [this.id, process.pid, hostname(), listen, now, now + BOOT_GRACE_MS, 'live'],
    );
    await this.beat();
    this.timer = setInterval(() => void this.beat().catch(this.onError), this.beatMs);
    this.timer.unref();
  }

  /** Records the address once listening: the process has started, and beats with the present time from now on. */
  async listening(address: string): Promise<void> {
    this.booting = false;
    await this.store.run("UPDATE kernel_nodes SET listen = ?, heartbeat_at = ? WHERE id = ? AND state = 'live'", [
      address,
      Date.now(),
      this.id,
    ]);
  }

  /** Stops beating without saying so, as a killed process would (tests of the handover). */
  silence(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  async stop(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.store.run("UPDATE kernel_nodes SET state = 'stopped', heartbeat_at = ? WHERE id = ?", [
      Date.now(),
      this.id,
    ]);
  }

  /**
   * The nodes alive now. A node that has not watched steadily for a lease (it is starting, or it stalled) trusts the
   * rows' state: a silent node is then marked dead by a steady one, and the dead handlers take its work over.
   */
  async live(): Promise<string[]> {
    const now = Date.now();
    const since = this.isSteady(now) ? now - this.leaseMs : Number.MIN_SAFE_INTEGER;
    const rows = await this.store.many<{ id: string }>(
      "SELECT id FROM kernel_nodes WHERE state = 'live' AND heartbeat_at >= ?",
      [since],
    );
    return rows.map((r) => r.id);
  }

  async address(nodeId: string): Promise<string | undefined> {
    const row = await this.store.one<{ listen: string | null }>(
      "SELECT listen FROM kernel_nodes WHERE id = ? AND state = 'live' AND heartbeat_at >= ?",
      [nodeId, Date.now() - this.leaseMs],
    );
    return row?.listen ?? undefined;
  }

  /** The nodes seen within FORGET_AFTER_MS (the rows beat() keeps), oldest boot first. */
  async list(): Promise<NodeInfo[]> {
    const rows = await this.store.many<Omit<NodeInfo, 'self'>>(
      `SELECT id, host, pid, listen, state, boot_at AS "bootAt", heartbeat_at AS "heartbeatAt" FROM kernel_nodes
       WHERE heartbeat_at >= ? ORDER BY boot_at, id`,
      [Date.now() - FORGET_AFTER_MS],
    );
    return rows.map((row) => ({ ...row, self: row.id === this.id }));
  }

  /** A module copy's handler; `run` tracks its work. Nodes already gone are handed to it at the next beat. */
  onDead(fn: (nodeId: string) => unknown, run: (work: Promise<unknown>) => void): () => void {
    const handler = { fn, done: new Set<string>(), run };
    this.handlers.add(handler);
    queueMicrotask(() => this.notify(handler));
    return () => void this.handlers.delete(handler);
  }

  /** Beats, marks silent nodes dead, forgets old rows and hands gone nodes to the handlers. */
  async beat(): Promise<void> {
    const now = Date.now();
    // Only a live row beats: a node another process marked dead has had its claims taken over, so going on would run
    // that work twice. It stops instead (a supervisor starts it again as a new node).
    const beating = await this.store.run("UPDATE kernel_nodes SET heartbeat_at = ? WHERE id = ? AND state = 'live'", [
      this.booting ? now + BOOT_GRACE_MS : now,
      this.id,
    ]);
    if (!beating.changes) {
      this.silence();
      this.onFenced();
      return;
    }
    if (this.steady(now))
      await this.store.run("UPDATE kernel_nodes SET state = 'dead' WHERE state = 'live' AND heartbeat_at < ?", [
        now - this.leaseMs,
      ]);
    await this.store.run('DELETE FROM kernel_nodes WHERE state <> ? AND heartbeat_at < ?', [
      'live',
      now - FORGET_AFTER_MS,
    ]);
    const rows = await this.store.many<{ id: string; state: string }>('SELECT id, state FROM kernel_nodes');
    this.liveIds = rows.filter((r) => r.state === 'live').map((r) => r.id);
    this.gone = rows.filter((r) => r.state !== 'live').map((r) => r.id);
    for (const handler of this.handlers) this.notify(handler);
  }

  /**
   * Whether this node may judge others silent: its own beats have come on time for a whole lease. A node that has just
   * started, or whose own beat came late (its event loop or the machine stalled), has not watched long enough to tell
   * a dead node from one stalled by the same cause (a busy machine, a second kernel in the same process).
   */
  private steady(now: number): boolean {
    if (this.lastBeat === undefined || now - this.lastBeat > 2 * this.beatMs) this.steadySince = now;
    this.lastBeat = now;
    return this.isSteady(now);
  }

  private isSteady(now: number): boolean {
    const onTime = this.lastBeat !== undefined && now - this.lastBeat <= 2 * this.beatMs;
    return onTime && this.steadySince !== undefined && now - this.steadySince >= this.leaseMs;
  }

  private notify(handler: DeadHandler): void {
    for (const node of this.gone) {
      if (handler.done.has(node)) continue;
      handler.done.add(node);
      // A takeover that failed is tried again at the next beat.
      const work = Promise.resolve()
        .then(() => handler.fn(node))
        .catch((err: unknown) => {
          handler.done.delete(node);
          throw err;
        });
      handler.run(work);
    }
  }
}

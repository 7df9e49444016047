/**
 * Turn ownership across processes (agents_session_leases, agents_session_waits). A turn runs only while it holds its
 * session's lease; a turn that finds the session held, or an older turn waiting for it, queues a ticket with its
 * arrival and waits, woken by the release (here at once, from another process through the change feed, and by a
 * bounded poll besides). The oldest ticket takes the session next, whichever process it arrived on.
 *
 * Releases are written behind the turn's answer, in the same flush as its messages, so a process that takes the
 * session next reads them. The copy of the module that released may take its own lease back at once (its next turn).
 * When a process dies, one live process releases its leases in one conditional update, records its turns as
 * interrupted, and drops its tickets.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { HttpError, lockInTransaction, WriteBehind, type ChangeFeed, type Queries, type Store } from '@talon/module-sdk';
import type { TraceStore } from './traces.ts';

/** The change-feed topic of leases (key: the session id; '' for any). */
export const LEASES_TOPIC = 'leases';
/** A waiting turn looks again at least this often (a note lost, a process that died between its beats). */
export const POLL_MS = 1000;

/** A turn as the leases see it. */
export interface LeaseTurn {
  id: string;
  sessionId: string;
  agentId: string;
  origin: string;
  /** When it arrived (epoch ms) and its order within the process: its place in the session's queue. */
  arrivedAt: number;
  seq: number;
}

/** The running turn of a session or agent, on whichever process. */
export interface Owner {
  sessionId: string;
  turnId: string;
  node: string;
}

interface LeaseRow {
  session_id: string;
  turn_id: string | null;
  agent_id: string;
  node: string;
  holder: string;
  origin: string;
  started_at: number;
}

export interface LeaseDeps {
  store: Store;
  changes: ChangeFeed;
  /** This process's node id. */
  node: string;
  traces: TraceStore;
  log: Logger;
}

export class SessionLeases {
  /** This copy of the module: its leases are its own to take back (another copy in this process waits like anyone). */
  readonly holder = randomUUID();
  /** Turns of this copy that hold their session's lease (set in the transaction that took it). */
  private readonly held = new Set<string>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly releases: WriteBehind<{ sessionId: string; turnId: string }>;

  constructor(private readonly deps: LeaseDeps) {
    this.releases = new WriteBehind(
      deps.store,
      (t, r) => this.writeRelease(t, r.sessionId, r.turnId),
      (err, rows) => deps.log.error({ err, sessions: rows.map((r) => r.sessionId) }, 'session leases could not be released'),
    );
    deps.changes.on(LEASES_TOPIC, (sessionId) => this.wake(sessionId));
  }

  /**
   * Waits until the turn holds its session (FIFO with every other turn of the session, on any process). Resolves with
   * the process that ran the session's previous turn. Rejects with 503 when `signal` (the module stopping) aborts.
   */
  async acquire(turn: LeaseTurn, signal: AbortSignal): Promise<{ previousNode?: string }> {
    let queued = false;
    try {
      for (;;) {
        if (signal.aborted) throw new HttpError(503, 'the service is stopping: the turn did not start');
        const woken = this.nextWake(turn.sessionId);
        try {
          const taken = await this.deps.store
            .tx((t) => this.take(t, turn, queued))
            .catch((err: unknown) => {
              this.held.delete(turn.id);
              throw err;
            });
          if (taken) {
            queued = false;
            return taken;
          }
          queued = true;
          await this.sleep(woken.promise, signal);
        } finally {
          woken.cancel();
        }
      }
    } finally {
      // A turn that gave up waiting leaves the queue, so that the turns behind it do not wait for it.
      if (queued) await this.leaveQueue(turn).catch((err: unknown) => this.deps.log.warn({ err, turn_id: turn.id }, 'a wait ticket was not removed'));
    }
  }

  /** The turn ended: its lease is released after its messages are written (same flush); this copy's waiters try now. */
  release(turn: Pick<LeaseTurn, 'id' | 'sessionId'>): void {
    if (!this.held.delete(turn.id)) return;
    this.releases.push({ sessionId: turn.sessionId, turnId: turn.id });
    this.wake(turn.sessionId);
  }

  /** Writes the releases still queued (module stop). */
  flush(): Promise<void> {
    return this.releases.flush();
  }

  /** The turn running a session, if one does (on any process). */
  async ofSession(sessionId: string): Promise<Owner | undefined> {
    const row = await this.deps.store.one<LeaseRow>('SELECT * FROM agents_session_leases WHERE session_id = ? AND turn_id IS NOT NULL', [sessionId]);
    return row ? { sessionId: row.session_id, turnId: row.turn_id!, node: row.node } : undefined;
  }

  /** The running turns of an agent, oldest first (on any process). */
  async ofAgent(agentId: string): Promise<Owner[]> {
    const rows = await this.deps.store.many<LeaseRow>(
      'SELECT * FROM agents_session_leases WHERE agent_id = ? AND turn_id IS NOT NULL ORDER BY started_at, session_id',
      [agentId],
    );
    return rows.map((r) => ({ sessionId: r.session_id, turnId: r.turn_id!, node: r.node }));
  }

  /** Processes with a turn waiting for one of the agent's sessions. */
  async waitingNodes(agentId: string): Promise<string[]> {
    const rows = await this.deps.store.many<{ node: string }>(
      'SELECT DISTINCT w.node FROM agents_session_waits w JOIN agents_sessions s ON s.id = w.session_id WHERE s.agent_id = ?',
      [agentId],
    );
    return rows.map((r) => r.node);
  }

  /**
   * A dead process's turns: its leases are released in one conditional update (whichever live process runs it first
   * finds them; the others find none), each turn is recorded as interrupted, and its tickets go. Returns the turns
   * this process took over.
   */
  async takeOver(node: string): Promise<Owner[]> {
    const lost = await this.deps.store.tx(async (t) => {
      // PostgreSQL: a process taking over at the same moment waits for these rows, then finds them released.
      const rows = await t.many<LeaseRow>(
        `SELECT * FROM agents_session_leases WHERE node = ? AND turn_id IS NOT NULL${t.pick({ sqlite: '', postgres: ' FOR UPDATE' })}`,
        [node],
      );
      if (rows.length) await t.run('UPDATE agents_session_leases SET turn_id = NULL WHERE node = ? AND turn_id IS NOT NULL', [node]);
      const now = Date.now();
      for (const row of rows) {
        await this.deps.traces.insert(t, {
          turn_id: row.turn_id!,
          agent_id: row.agent_id,
          session_id: row.session_id,
          origin: row.origin,
          started_at: new Date(row.started_at).toISOString(),
          duration_ms: Math.max(0, now - row.started_at),
          iterations: 0,
          input_tokens: 0,
          output_tokens: 0,
          cost_usd: 0,
          outcome: 'interrupted',
          error: `the process that ran the turn (node ${node}) was lost`,
          steps: [],
        });
      }
      const { changes } = await t.run('DELETE FROM agents_session_waits WHERE node = ?', [node]);
      if (rows.length || changes) await this.deps.changes.note(LEASES_TOPIC, '', t);
      return rows;
    });
    if (lost.length) {
      this.deps.log.warn({ node, turns: lost.map((r) => r.turn_id) }, 'took over the sessions of a lost process: its turns are recorded as interrupted');
      this.wake('');
    }
    return lost.map((r) => ({ sessionId: r.session_id, turnId: r.turn_id!, node }));
  }

  /** At start: what processes that are no longer live left claimed (their rows may be past the dead-node handover). */
  async sweep(live: readonly string[]): Promise<void> {
    const rows = await this.deps.store.many<{ node: string }>(
      'SELECT node FROM agents_session_leases WHERE turn_id IS NOT NULL UNION SELECT node FROM agents_session_waits',
    );
    const alive = new Set(live);
    for (const { node } of rows) if (!alive.has(node)) await this.takeOver(node);
  }

  /** One attempt, in a transaction: the lease is taken when free (or this copy's own, its turn over) and no older turn waits. */
  private async take(t: Queries, turn: LeaseTurn, queued: boolean): Promise<{ previousNode?: string } | undefined> {
    await lockSession(t, turn.sessionId);
    // The lease (if the session has one) and whether an older turn waits, in one statement: one round trip.
    const found = await t.one<Partial<LeaseRow> & { older: string | null }>(
      `SELECT l.*, (SELECT w.turn_id FROM agents_session_waits w WHERE w.session_id = ? AND w.turn_id <> ?
           AND (w.arrived_at < ? OR (w.arrived_at = ? AND (w.seq < ? OR (w.seq = ? AND w.turn_id < ?)))) LIMIT 1) AS older
         FROM (SELECT 1 AS one) AS one_row LEFT JOIN agents_session_leases l ON l.session_id = ?`,
      [turn.sessionId, turn.id, turn.arrivedAt, turn.arrivedAt, turn.seq, turn.seq, turn.id, turn.sessionId],
    );
    const lease = found?.session_id ? (found as LeaseRow) : undefined;
    const busy = lease?.turn_id != null && !(lease.holder === this.holder && !this.held.has(lease.turn_id));
    if (busy || found?.older) {
      if (!queued)
        await t.run('INSERT INTO agents_session_waits (turn_id, session_id, node, arrived_at, seq) VALUES (?, ?, ?, ?, ?) ON CONFLICT (turn_id) DO NOTHING', [
          turn.id,
          turn.sessionId,
          this.deps.node,
          turn.arrivedAt,
          turn.seq,
        ]);
      return undefined;
    }
    await t.run(
      `INSERT INTO agents_session_leases (session_id, turn_id, agent_id, node, holder, origin, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET turn_id = excluded.turn_id, agent_id = excluded.agent_id, node = excluded.node,
           holder = excluded.holder, origin = excluded.origin, started_at = excluded.started_at`,
      [turn.sessionId, turn.id, turn.agentId, this.deps.node, this.holder, turn.origin, Date.now()],
    );
    if (queued) await t.run('DELETE FROM agents_session_waits WHERE turn_id = ?', [turn.id]);
    // Held from here on: a transaction of this copy that comes after this one sees it (transactions run one by one).
    this.held.add(turn.id);
    return { previousNode: lease?.node };
  }

  /** Frees the lease if the turn still holds it; tells the processes waiting for the session (there are tickets). */
  private async writeRelease(t: Queries, sessionId: string, turnId: string): Promise<void> {
    await lockSession(t, sessionId);
    // Released, and whether a turn waits for the session, in one statement.
    const released = await t.one<{ waiting: string | null }>(
      `UPDATE agents_session_leases SET turn_id = NULL WHERE session_id = ? AND turn_id = ?
         RETURNING (SELECT turn_id FROM agents_session_waits WHERE session_id = ? LIMIT 1) AS waiting`,
      [sessionId, turnId, sessionId],
    );
    if (released?.waiting) await this.deps.changes.note(LEASES_TOPIC, sessionId, t);
  }

  private async leaveQueue(turn: LeaseTurn): Promise<void> {
    await this.deps.store.tx(async (t) => {
      const { changes } = await t.run('DELETE FROM agents_session_waits WHERE turn_id = ?', [turn.id]);
      if (changes) await this.deps.changes.note(LEASES_TOPIC, turn.sessionId, t);
    });
    this.wake(turn.sessionId);
  }

  /** A promise resolved by the next wake of the session (registered before looking, so no release is missed). */
  private nextWake(sessionId: string): { promise: Promise<void>; cancel(): void } {
    let set = this.waiters.get(sessionId);
    if (!set) this.waiters.set(sessionId, (set = new Set()));
    let fire!: () => void;
    const promise = new Promise<void>((resolve) => (fire = resolve));
    set.add(fire);
    return {
      promise,
      cancel: () => {
        set.delete(fire);
        if (!set.size && this.waiters.get(sessionId) === set) this.waiters.delete(sessionId);
      },
    };
  }

  private async sleep(woken: Promise<void>, signal: AbortSignal): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      await Promise.race([
        woken,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, POLL_MS);
          onAbort = resolve;
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  private wake(sessionId: string): void {
    const sets = sessionId === '' ? [...this.waiters.values()] : [this.waiters.get(sessionId)];
    for (const set of sets) for (const fire of set ?? []) fire();
  }
}

/**
 * The session's lease is taken and released one transaction at a time. SQLite runs one writing transaction at a time
 * anyway; PostgreSQL runs them side by side, where two could each find the lease free (or no row yet) and both take it,
 * or a release could miss a ticket written meanwhile: the lock is held until the commit.
 */
async function lockSession(t: Queries, sessionId: string): Promise<void> {
  await lockInTransaction(t, `agents:session:${sessionId}`);
}

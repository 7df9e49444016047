/**
 * The queue's rows (tasks_queue): every move is one conditional UPDATE, so of several processes on one database only
 * one claims a row, one records its end, one takes over a dead node's rows.
 */
import { lockInTransaction, type Queries, type Store } from '@talon/module-sdk';

export type RowState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
export type RowKind = 'turn' | 'local';

export interface QueueRow {
  id: string;
  lane: string;
  kind: RowKind;
  payload: string;
  state: RowState;
  owner: string;
  node: string | null;
  attempts: number;
  result: string | null;
  error: string | null;
  error_status: number | null;
}

export interface NewRow {
  id: string;
  lane: string;
  kind: RowKind;
  key?: string;
  payload: string;
  owner: string;
  holder?: string;
}

/** An outcome as recorded: the result (JSON) of a done row, or the error of a failed one. */
export type Recorded = { state: 'done'; result: string | null } | { state: 'failed'; error: string; status: number | null };

/** The claimed row's fields a runner needs. */
export type Claimed = Pick<QueueRow, 'id' | 'lane' | 'kind' | 'payload' | 'attempts'>;

const COLUMNS = 'id, lane, kind, payload, state, owner, node, attempts, result, error, error_status';
const FINISHED = "('done', 'failed', 'cancelled')";
/** Rows a module copy may run (params: localOnly as 0/1, the copy's holder id): turns, and the local jobs it holds. */
const MINE = "((kind = 'turn' AND ? = 0) OR holder = ?)";
/** Rows of a node that died this often while running are failed instead of queued again. */
export const MAX_ATTEMPTS = 3;

export class QueueRows {
  constructor(private readonly store: Store) {}

  /** Inserts the row; with a key already taken, inserts nothing and answers the existing row's id. */
  async add(row: NewRow, at: number, t: Queries = this.store): Promise<{ id: string; added: boolean }> {
    const added = await t.one<{ id: string }>(
      `INSERT INTO tasks_queue (id, lane, kind, key, payload, state, owner, holder, created_at) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?)
       ON CONFLICT (key) DO NOTHING RETURNING id`,
      [row.id, row.lane, row.kind, row.key ?? null, row.payload, row.owner, row.holder ?? null, at],
    );
    if (added) return { id: added.id, added: true };
    const existing = await t.one<{ id: string }>('SELECT id FROM tasks_queue WHERE key = ?', [row.key ?? null]);
    return { id: existing!.id, added: false };
  }

  get(id: string): Promise<QueueRow | undefined> {
    return this.store.one<QueueRow>(`SELECT ${COLUMNS} FROM tasks_queue WHERE id = ?`, [id]);
  }

  /** Lanes with a row this copy may run waiting: turns (unless `localOnly`), and the local jobs it holds. */
  async waitingLanes(holder: string, localOnly: boolean): Promise<string[]> {
    const rows = await this.store.many<{ lane: string }>(`SELECT DISTINCT lane FROM tasks_queue WHERE state = 'queued' AND ${MINE}`, [
      localOnly ? 1 : 0,
      holder,
    ]);
    return rows.map((r) => r.lane);
  }

  /**
   * Claims the lane's oldest row this copy may run, if the lane's running rows (on every node) are under `cap`: one
   * conditional UPDATE, in a transaction of its own, so the count and the claim see the same rows.
   */
  claim(lane: string, cap: number, node: string, holder: string, localOnly: boolean, at: number): Promise<Claimed | undefined> {
    return this.store.tx(async (t) => {
      // SQLite's write lock runs claims one at a time. On PostgreSQL (read committed) two claims of different rows
      // could each count the lane's running rows before the other commits: a lock per lane, held to the commit, makes
      // the second count after the first claim.
      await lockInTransaction(t, `tasks:lane:${lane}`);
      return t.one<Claimed>(
        `UPDATE tasks_queue SET state = 'running', node = ?, started_at = ?, attempts = attempts + 1
         WHERE id = (SELECT id FROM tasks_queue WHERE lane = ? AND state = 'queued' AND ${MINE} ORDER BY seq LIMIT 1)
           AND state = 'queued'
           AND (SELECT COUNT(*) FROM tasks_queue WHERE lane = ? AND state = 'running') < ?
         RETURNING id, lane, kind, payload, attempts`,
        [node, at, lane, localOnly ? 1 : 0, holder, lane, cap],
      );
    });
  }

  /** Records the end of a row this node runs; false when it was no longer its own (cancelled, taken over). */
  async finish(id: string, node: string, outcome: Recorded, at: number, t: Queries): Promise<boolean> {
    const { changes } =
      outcome.state === 'done'
        ? await t.run("UPDATE tasks_queue SET state = 'done', result = ?, finished_at = ? WHERE id = ? AND node = ? AND state = 'running'", [
            outcome.result,
            at,
            id,
            node,
          ])
        : await t.run("UPDATE tasks_queue SET state = 'failed', error = ?, error_status = ?, finished_at = ? WHERE id = ? AND node = ? AND state = 'running'", [
            outcome.error,
            outcome.status,
            at,
            id,
            node,
          ]);
    return changes === 1;
  }

  /** The state a row is in now (undefined: no such row). */
  async stateOf(id: string, t: Queries): Promise<QueueRow['state'] | undefined> {
    return (await t.one<Pick<QueueRow, 'state'>>('SELECT state FROM tasks_queue WHERE id = ?', [id]))?.state;
  }

  /** Cancels a row that has not ended; its lane when it did, undefined when it had ended already. */
  async cancel(id: string, at: number, t: Queries): Promise<{ lane: string; node: string | null } | undefined> {
    return t.one<{ lane: string; node: string | null }>(
      "UPDATE tasks_queue SET state = 'cancelled', error = 'cancelled', finished_at = ? WHERE id = ? AND state IN ('queued', 'running') RETURNING lane, node",
      [at, id],
    );
  }

  /** The rows of `ids` that have ended, with their outcome. */
  ended(ids: readonly string[]): Promise<QueueRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.store.many<QueueRow>(`SELECT ${COLUMNS} FROM tasks_queue WHERE state IN ${FINISHED} AND id IN (${ids.map(() => '?').join(', ')})`, [...ids]);
  }

  /** Of the rows this node runs (`ids`), those no longer running here: cancelled elsewhere, or taken over. */
  async lost(ids: readonly string[], node: string): Promise<string[]> {
    if (!ids.length) return [];
    const still = await this.store.many<{ id: string }>(
      `SELECT id FROM tasks_queue WHERE node = ? AND state = 'running' AND id IN (${ids.map(() => '?').join(', ')})`,
      [node, ...ids],
    );
    const running = new Set(still.map((r) => r.id));
    return ids.filter((id) => !running.has(id));
  }

  /**
   * Takes over a gone node's rows, in one conditional UPDATE (of several live nodes, one moves each row): its running
   * turns go back to the queue, or fail once they were started MAX_ATTEMPTS times; the local jobs it queued or ran
   * fail (their function lived in that process only). Answers how many rows moved. (The CAST: PostgreSQL types a CASE
   * of NULL and a bare parameter as text, which a BIGINT column refuses.)
   */
  async takeOver(node: string, at: number, t: Queries): Promise<number> {
    const requeue = "kind = 'turn' AND attempts < ?";
    const { changes } = await t.run(
      `UPDATE tasks_queue SET
         state = CASE WHEN ${requeue} THEN 'queued' ELSE 'failed' END,
         error = CASE WHEN ${requeue} THEN NULL WHEN kind = 'turn' THEN ? ELSE ? END,
         error_status = CASE WHEN ${requeue} THEN NULL ELSE 503 END,
         finished_at = CASE WHEN ${requeue} THEN NULL ELSE CAST(? AS BIGINT) END,
         node = CASE WHEN ${requeue} THEN NULL ELSE node END,
         started_at = CASE WHEN ${requeue} THEN NULL ELSE started_at END
       WHERE (node = ? AND state = 'running') OR (owner = ? AND kind = 'local' AND state IN ('queued', 'running'))`,
      [
        MAX_ATTEMPTS,
        MAX_ATTEMPTS,
        `its process ended while it ran, ${MAX_ATTEMPTS} times`,
        "the process that queued it ended: a module's job runs only in the process that queued it",
        MAX_ATTEMPTS,
        MAX_ATTEMPTS,
        at,
        MAX_ATTEMPTS,
        MAX_ATTEMPTS,
        node,
        node,
      ],
    );
    return changes;
  }

  /** Nodes that hold rows: running ones, and the owners of local jobs not ended. */
  async holders(): Promise<string[]> {
    const rows = await this.store.many<{ node: string }>(
      `SELECT DISTINCT node FROM tasks_queue WHERE state = 'running'
       UNION SELECT DISTINCT owner AS node FROM tasks_queue WHERE kind = 'local' AND state IN ('queued', 'running')`,
    );
    return rows.map((r) => r.node);
  }

  /** Rows per lane and state, and the rows that ended since `since` and in the last `recentMs`. */
  async counts(since: number, recentSince: number): Promise<{ lanes: Map<string, LaneCounts>; recent: number }> {
    const rows = await this.store.many<{ lane: string; state: RowState; n: number; ended_since: number }>(
      `SELECT lane, state, COUNT(*) AS n, SUM(CASE WHEN finished_at >= ? THEN 1 ELSE 0 END) AS ended_since FROM tasks_queue GROUP BY lane, state`,
      [since],
    );
    const lanes = new Map<string, LaneCounts>();
    for (const r of rows) {
      const counts = lanes.get(r.lane) ?? { queued: 0, running: 0, completed: 0 };
      if (r.state === 'queued') counts.queued += Number(r.n);
      else if (r.state === 'running') counts.running += Number(r.n);
      else counts.completed += Number(r.ended_since ?? 0);
      lanes.set(r.lane, counts);
    }
    const recent = await this.store.one<{ n: number }>(`SELECT COUNT(*) AS n FROM tasks_queue WHERE finished_at >= ?`, [recentSince]);
    return { lanes, recent: Number(recent?.n ?? 0) };
  }

  /** Ended rows older than `before` go (the outcome was handed out long ago). */
  prune(before: number): Promise<{ changes: number }> {
    return this.store.run(`DELETE FROM tasks_queue WHERE state IN ${FINISHED} AND finished_at < ?`, [before]);
  }
}

export interface LaneCounts {
  queued: number;
  running: number;
  /** Rows that ended since the process started. */
  completed: number;
}

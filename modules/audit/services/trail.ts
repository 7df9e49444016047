/**
 * The trail: record() queues (a push, nothing more, on the request path); flush() writes the queued entries in one
 * transaction that reads the chain's tip and appends after it. Several processes share the database, so the tip is
 * never kept in memory: another process may have moved it. The transaction takes the write lock before it reads
 * (SQLite: BEGIN IMMEDIATE; PostgreSQL: a transaction lock), so two appenders queue up and the chain never forks.
 */
import { lockInTransaction, type Queries } from '@talon/module-sdk';
import type { AuditEntry, AuditRecord, AuditTrail, VerifyReport } from '@talon/audit';
import { ChainWalk, GENESIS, entryHash } from './chain.ts';

interface Queued {
  timestamp: string;
  record: AuditRecord;
}

interface Tip {
  last_id: number;
  last_hash: string;
}

const COLUMNS = 'id, timestamp, event_type, agent_id, details, outcome, prev_hash, hash';

/** Rows verify() reads per statement: memory stays bounded however long the chain is. */
const VERIFY_PAGE = 10_000;

export class Trail implements AuditTrail {
  private queue: Queued[] = [];
  private holds = 0;
  /** The write under way: writes of this process run one after another, so entries keep the order they came in. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Queries,
    private readonly onError: (err: Error, lost: number) => void,
  ) {}

  record(record: AuditRecord): void {
    this.queue.push({ timestamp: new Date().toISOString(), record });
  }

  pending(): number {
    return this.queue.length;
  }

  /** Never rejects: a failed batch goes back in front of the queue and is reported. */
  flush(): Promise<void> {
    return this.serial(() => this.writeQueued(false));
  }

  async hold(): Promise<() => void> {
    // Held first, so that no later flush writes; then what was queued so far is written: the chain a restore carries
    // over is whole.
    this.holds++;
    await this.serial(() => this.writeQueued(true));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      void this.flush();
    };
  }

  private serial(work: () => Promise<void>): Promise<void> {
    const next = this.writing.then(work);
    this.writing = next;
    return next;
  }

  private async writeQueued(evenHeld: boolean): Promise<void> {
    if (!this.queue.length || (this.holds && !evenHeld)) return;
    const batch = this.queue;
    this.queue = [];
    try {
      await this.store.tx((t) => append(t, batch));
    } catch (err) {
      // Nothing was written: put the batch back in front so nothing is lost, and try again next time.
      this.queue = batch.concat(this.queue);
      this.onError(err as Error, batch.length);
    }
  }

  async recent(query: { limit: number; event_type?: string; agent_id?: string; before?: number }): Promise<{ entries: AuditEntry[]; total: number }> {
    await this.flush();
    const where: string[] = [];
    const args: string[] = [];
    if (query.event_type) (where.push('event_type = ?'), args.push(query.event_type));
    if (query.agent_id) (where.push('agent_id = ?'), args.push(query.agent_id));
    const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const page = query.before === undefined ? filter : `${filter ? `${filter} AND` : 'WHERE'} id < ?`;
    const pageArgs = query.before === undefined ? args : [...args, query.before];
    const entries = await this.store.many<AuditEntry>(`SELECT ${COLUMNS} FROM audit_entries ${page} ORDER BY id DESC LIMIT ?`, [...pageArgs, query.limit]);
    const counted = await this.store.one<{ n: number }>(`SELECT count(*) AS n FROM audit_entries ${filter}`, args);
    return { entries, total: Number(counted?.n ?? 0) };
  }

  /**
   * Walks the whole chain a page at a time. Each page is read with the tip in one transaction, so the last page
   * (shorter than a full one) and the tip are of the same moment even while other processes append.
   */
  async verify(): Promise<VerifyReport> {
    await this.flush();
    const walk = new ChainWalk();
    for (;;) {
      const { rows, tip } = await this.store.tx(async (t) => ({
        rows: await t.many<AuditEntry>(`SELECT ${COLUMNS} FROM audit_entries WHERE id > ? ORDER BY id LIMIT ?`, [walk.lastId, VERIFY_PAGE]),
        tip: await t.one<Tip>('SELECT last_id, last_hash FROM audit_tip WHERE one = 1'),
      }));
      walk.add(rows);
      if (rows.length < VERIFY_PAGE) return walk.end(tip);
    }
  }
}

/**
 * Appends a batch after the chain's tip, in the caller's transaction. The new entries link to the recorded tip (the
 * audit_tip row), so a tail cut from the table stays visible as a broken link; their ids continue after the larger
 * of the tip's id and the highest row's, so a row slipped in past the tip never blocks the trail with a key clash.
 */
async function append(t: Queries, batch: readonly Queued[]): Promise<void> {
  // Appenders take turns (on PostgreSQL a lock for the transaction; a tip row FOR UPDATE would lock nothing while
  // the trail is still empty, and two first batches would both take id 1).
  await lockInTransaction(t, 'audit:chain');
  const recorded = await t.one<Tip>('SELECT last_id, last_hash FROM audit_tip WHERE one = 1');
  const highest = await t.one<{ id: number; hash: string }>('SELECT id, hash FROM audit_entries ORDER BY id DESC LIMIT 1');
  let hash = recorded?.last_hash ?? highest?.hash ?? GENESIS;
  let id = Math.max(recorded?.last_id ?? 0, highest?.id ?? 0);
  for (const { timestamp, record } of batch) {
    const entry = {
      id: id + 1,
      timestamp,
      event_type: record.event_type,
      agent_id: record.agent_id ?? null,
      details: JSON.stringify(record.details ?? {}),
      outcome: record.outcome ?? 'ok',
      prev_hash: hash,
    };
    hash = entryHash(entry);
    id = entry.id;
    await t.run(`INSERT INTO audit_entries (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
      entry.id,
      entry.timestamp,
      entry.event_type,
      entry.agent_id,
      entry.details,
      entry.outcome,
      entry.prev_hash,
      hash,
    ]);
  }
  await t.run(
    'INSERT INTO audit_tip (one, last_id, last_hash) VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE SET last_id = excluded.last_id, last_hash = excluded.last_hash',
    [id, hash],
  );
}

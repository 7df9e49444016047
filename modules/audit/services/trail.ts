/**
 * The trail: record() queues (a push, nothing more, on the request path); flush() gives the queued
 * entries their ids and hashes and writes them in one transaction with the tip. One writer per
 * database: the chain's tip lives here and advances only after the transaction committed.
 */
import type { Database } from 'better-sqlite3';
import { prepared } from '@talon/module-sdk';
import type { AuditEntry, AuditRecord, AuditTrail, VerifyReport } from '@talon/audit';
import { GENESIS, entryHash, report, walkChain, type RawRow } from './chain.ts';

interface Queued {
  timestamp: string;
  record: AuditRecord;
}

const COLUMNS = 'id, timestamp, event_type, agent_id, details, outcome, prev_hash, hash';

export class Trail implements AuditTrail {
  private queue: Queued[] = [];
  private tip: { id: number; hash: string } | undefined;
  private holds = 0;

  constructor(
    private readonly db: Database,
    private readonly onError: (err: Error, lost: number) => void,
  ) {}

  record(record: AuditRecord): void {
    this.queue.push({ timestamp: new Date().toISOString(), record });
  }

  pending(): number {
    return this.queue.length;
  }

  flush(): void {
    if (!this.queue.length || this.holds) return;
    const batch = this.queue;
    this.queue = [];
    try {
      this.write(batch);
    } catch (err) {
      // The tip did not move: put the batch back in front so nothing is lost, and try again next time.
      this.queue = batch.concat(this.queue);
      this.onError(err as Error, batch.length);
    }
  }

  hold(): () => void {
    this.flush();
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      // The database may have been swapped under us (a restore): read the tip again.
      this.tip = undefined;
      this.flush();
    };
  }

  private currentTip(): { id: number; hash: string } {
    if (!this.tip) {
      const last = prepared(this.db, 'SELECT id, hash FROM audit_entries ORDER BY id DESC LIMIT 1').get() as { id: number; hash: string } | undefined;
      this.tip = last ?? { id: 0, hash: GENESIS };
    }
    return this.tip;
  }

  private write(batch: Queued[]): void {
    const insert = prepared(this.db, `INSERT INTO audit_entries (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    const setTip = prepared(
      this.db,
      'INSERT INTO audit_tip (one, last_id, last_hash) VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE SET last_id = excluded.last_id, last_hash = excluded.last_hash',
    );
    let { id, hash } = this.currentTip();
    this.db.transaction(() => {
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
        insert.run(entry.id, entry.timestamp, entry.event_type, entry.agent_id, entry.details, entry.outcome, entry.prev_hash, hash);
      }
      setTip.run(id, hash);
    })();
    this.tip = { id, hash };
  }

  recent(query: { limit: number; event_type?: string; agent_id?: string; before?: number }): { entries: AuditEntry[]; total: number } {
    this.flush();
    const where: string[] = [];
    const args: string[] = [];
    if (query.event_type) (where.push('event_type = ?'), args.push(query.event_type));
    if (query.agent_id) (where.push('agent_id = ?'), args.push(query.agent_id));
    const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const page = query.before === undefined ? filter : `${filter ? `${filter} AND` : 'WHERE'} id < ?`;
    const pageArgs = query.before === undefined ? args : [...args, query.before];
    const entries = prepared(this.db, `SELECT ${COLUMNS} FROM audit_entries ${page} ORDER BY id DESC LIMIT ?`).all(...pageArgs, query.limit) as AuditEntry[];
    const { n } = prepared(this.db, `SELECT count(*) AS n FROM audit_entries ${filter}`).get(...args) as { n: number };
    return { entries, total: n };
  }

  verify(): VerifyReport {
    this.flush();
    const rows = prepared(this.db, `SELECT ${COLUMNS} FROM audit_entries ORDER BY id`).raw(true).iterate() as Iterable<RawRow>;
    const tip = prepared(this.db, 'SELECT last_id, last_hash FROM audit_tip WHERE one = 1').get() as { last_id: number; last_hash: string } | undefined;
    const { length, breaks } = walkChain(rows, tip);
    const end = (order: 'ASC' | 'DESC') =>
      (prepared(this.db, `SELECT ${COLUMNS} FROM audit_entries ORDER BY id ${order} LIMIT 1`).get() as AuditEntry | undefined) ?? null;
    return report(length, breaks, { first: end('ASC'), last: end('DESC') });
  }
}

/**
 * The hash chain. Each entry's hash is SHA-256 (lowercase hex) over the UTF-8 text of
 *   JSON.stringify([prev_hash, id, timestamp, event_type, agent_id, details, outcome])
 * — a JSON array, so no field can bleed into the next whatever it holds. prev_hash is the previous
 * entry's hash; the first entry's is GENESIS. The id is part of the hash, so moving an entry to
 * another position breaks it, and a deleted entry breaks the next one's prev_hash.
 */
import { hash } from 'node:crypto';
import type { AuditEntry, BreakKind, VerifyReport } from '@talon/audit';

export const GENESIS = '0'.repeat(64);

export type Hashed = Omit<AuditEntry, 'hash'>;

export function entryHash(e: Hashed): string {
  const canonical = JSON.stringify([e.prev_hash, e.id, e.timestamp, e.event_type, e.agent_id, e.details, e.outcome]);
  // crypto.hash: the one-shot form, about twice as fast as createHash for short inputs (verify walks millions).
  return hash('sha256', canonical, 'hex');
}

interface Break {
  broken_at: number;
  kind: BreakKind;
  expected: string;
  found: string;
}

/**
 * Walks the chain in id order, a page of rows at a time, and lists every broken link. After a break the walk goes
 * on from the stored hash, so one tampered row is reported once, not as a cascade.
 */
export class ChainWalk {
  readonly breaks: Break[] = [];
  length = 0;
  /** The id of the last row walked: the next page starts after it. */
  lastId = Number.MIN_SAFE_INTEGER;
  first: AuditEntry | null = null;
  last: AuditEntry | null = null;
  private prev = GENESIS;

  add(rows: Iterable<AuditEntry>): void {
    for (const row of rows) {
      const { id, prev_hash, hash } = row;
      this.length++;
      this.lastId = id;
      this.first ??= row;
      this.last = row;
      if (prev_hash !== this.prev) this.breaks.push({ broken_at: id, kind: 'prev_hash', expected: this.prev, found: prev_hash });
      const computed = entryHash(row);
      if (computed !== hash) this.breaks.push({ broken_at: id, kind: 'hash', expected: computed, found: hash });
      this.prev = hash;
    }
  }

  /** The tip is written with each batch: rows cut from the end leave it pointing past the last one. */
  end(tip: { last_id: number; last_hash: string } | undefined): VerifyReport {
    const lastId = this.length ? this.lastId : 0;
    if (tip && (tip.last_id !== lastId || tip.last_hash !== this.prev)) {
      this.breaks.push({ broken_at: tip.last_id, kind: 'tip', expected: tip.last_hash, found: this.length ? this.prev : GENESIS });
    }
    return report(this.length, this.breaks, { first: this.first, last: this.last });
  }
}

function report(length: number, breaks: Break[], ends: { first: AuditEntry | null; last: AuditEntry | null }): VerifyReport {
  if (!breaks.length) return { status: 'valid', chain_length: length, first_entry: ends.first, last_entry: ends.last };
  const [first] = breaks;
  return { status: 'broken', chain_length: length, ...first, breaks };
}

/** Contract of the audit module: other modules record acts and read the chain through `auditTrail`. */
import { serviceRef } from '@talon/module-sdk';

/** What a module records; the trail adds id, timestamp and the hashes. */
export interface AuditRecord {
  /** snake_case, from the documented list (docs/operations.md), e.g. `agent_spawned`. */
  event_type: string;
  agent_id?: string | null;
  /** Facts of the act (never a secret): stored as compact JSON text. */
  details?: Record<string, unknown>;
  /** `ok` unless said otherwise (`error`, `denied`, `failed`...). */
  outcome?: string;
}

export interface AuditEntry {
  id: number;
  timestamp: string;
  event_type: string;
  agent_id: string | null;
  details: string;
  outcome: string;
  hash: string;
  prev_hash: string;
}

export type VerifyReport =
  | { status: 'valid'; chain_length: number; first_entry: AuditEntry | null; last_entry: AuditEntry | null }
  | {
      status: 'broken';
      chain_length: number;
      /** Id of the first broken link; every one found is in `breaks`. */
      broken_at: number;
      kind: BreakKind;
      expected: string;
      found: string;
      breaks: Array<{ broken_at: number; kind: BreakKind; expected: string; found: string }>;
    };

/** prev_hash: a link to the previous entry is wrong (deleted or reordered rows); hash: the entry's content changed; tip: the tail was cut. */
export type BreakKind = 'prev_hash' | 'hash' | 'tip';

export interface AuditTrail {
  /** Queues an entry; never blocks and never throws (written in the next batch). */
  record(entry: AuditRecord): void;
  /** Writes the queued entries now (after any write under way); never rejects: a failed batch is kept and retried. */
  flush(): Promise<void>;
  /**
   * Holds writing (entries keep queueing) until the returned function is called: a restore uses it so the
   * chain it carries over into the restored database is the whole chain. Resolves once what was queued is written.
   */
  hold(): Promise<() => void>;
  /** Newest first; `before` pages back (ids below it); `total` counts every entry the filters match, on any page. */
  recent(query: { limit: number; event_type?: string; agent_id?: string; before?: number }): Promise<{ entries: AuditEntry[]; total: number }>;
  /** Walks the whole chain (several processes may be appending meanwhile: the report is of one moment). */
  verify(): Promise<VerifyReport>;
}

export const auditTrail = serviceRef<AuditTrail>('audit.trail');

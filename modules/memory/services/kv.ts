import type { Database, Statement } from 'better-sqlite3';
import { badRequest, payloadTooLarge, type TalonEvents } from '@talon/module-sdk';
import type { KvEntry, KvMemory } from '../api.ts';
import type { MemoryConfig } from '../config.ts';

export const KEY_PATTERN = /^[A-Za-z0-9_.:-]+$/;

interface Row {
  key: string;
  value: string;
}

/** Per-agent key-value memory in memory_kv. Values are stored as JSON text. */
export class KvStore implements KvMemory {
  private readonly stmt: {
    get: Statement<[string, string], Row>;
    upsert: Statement<[string, string, string, string, string]>;
    del: Statement<[string, string]>;
    list: Statement<[string, number, number], Row>;
    all: Statement<[string], Row>;
    drop: Statement<[string]>;
  };

  constructor(
    private readonly db: Database,
    private readonly config: () => MemoryConfig,
    private readonly now: () => number = Date.now,
    /** Told after each write (memory.updated on the bus). */
    private readonly changed: (change: TalonEvents['memory.updated']) => void = () => undefined,
  ) {
    this.stmt = {
      get: db.prepare('SELECT key, value FROM memory_kv WHERE agent_id = ? AND key = ?'),
      upsert: db.prepare(
        `INSERT INTO memory_kv (agent_id, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (agent_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ),
      del: db.prepare('DELETE FROM memory_kv WHERE agent_id = ? AND key = ?'),
      list: db.prepare('SELECT key, value FROM memory_kv WHERE agent_id = ? ORDER BY key LIMIT ? OFFSET ?'),
      all: db.prepare('SELECT key, value FROM memory_kv WHERE agent_id = ? ORDER BY key'),
      drop: db.prepare('DELETE FROM memory_kv WHERE agent_id = ?'),
    };
  }

  /** Throws 400 naming the key when it is empty, too long or has other characters than [A-Za-z0-9_.:-]. */
  checkKey(key: string): void {
    const max = this.config().max_key_bytes;
    const bytes = Buffer.byteLength(key, 'utf8');
    if (bytes === 0) throw badRequest('key must not be empty');
    if (bytes > max) throw badRequest(`key '${key.slice(0, 64)}…' is ${bytes} bytes; the limit is ${max}`);
    if (!KEY_PATTERN.test(key)) throw badRequest(`key '${key}' may only contain letters, digits and _ . : -`);
  }

  /** The JSON text of a value; 400 when it is not JSON-representable, 413 above max_value_bytes. */
  private encode(key: string, value: unknown): string {
    const text = value === undefined ? undefined : JSON.stringify(value);
    if (text === undefined) throw badRequest(`value of key '${key}' is not a JSON value`);
    const max = this.config().max_value_bytes;
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > max) throw payloadTooLarge(`value of key '${key}' is ${bytes} bytes; the limit is ${max}`);
    return text;
  }

  get(agentId: string, key: string): KvEntry | undefined {
    const row = this.stmt.get.get(agentId, key);
    return row && decode(row);
  }

  set(agentId: string, key: string, value: unknown): void {
    this.checkKey(key);
    const at = new Date(this.now()).toISOString();
    this.stmt.upsert.run(agentId, key, this.encode(key, value), at, at);
    this.changed({ agentId, operation: 'set', key });
  }

  delete(agentId: string, key: string): boolean {
    const gone = this.stmt.del.run(agentId, key).changes > 0;
    if (gone) this.changed({ agentId, operation: 'delete', key });
    return gone;
  }

  list(agentId: string, page: { limit?: number; offset?: number } = {}): KvEntry[] {
    return this.stmt.list.all(agentId, page.limit ?? -1, page.offset ?? 0).map(decode);
  }

  count(agentId?: string): number {
    const sql = agentId === undefined ? 'SELECT COUNT(*) AS n FROM memory_kv' : 'SELECT COUNT(*) AS n FROM memory_kv WHERE agent_id = ?';
    const stmt = this.db.prepare<unknown[], { n: number }>(sql);
    return (agentId === undefined ? stmt.get() : stmt.get(agentId))!.n;
  }

  exportAll(agentId: string): KvEntry[] {
    return this.stmt.all.all(agentId).map(decode);
  }

  /** Validates every entry first, then writes them all in one transaction (all or nothing). */
  importAll(agentId: string, entries: KvEntry[]): number {
    const encoded = entries.map((e) => {
      if (typeof e?.key !== 'string') throw badRequest('every imported entry needs a string key');
      this.checkKey(e.key);
      return { key: e.key, text: this.encode(e.key, e.value) };
    });
    const at = new Date(this.now()).toISOString();
    this.db.transaction(() => {
      for (const e of encoded) this.stmt.upsert.run(agentId, e.key, e.text, at, at);
    })();
    return encoded.length;
  }

  deleteAgent(agentId: string): void {
    this.stmt.drop.run(agentId);
  }
}

function decode(row: Row): KvEntry {
  return { key: row.key, value: JSON.parse(row.value) as unknown };
}

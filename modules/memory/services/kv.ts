import { badRequest, payloadTooLarge, type Queries, type Store } from '@talon/module-sdk';
import type { KvEntry, KvMemory, MemoryChange } from '../api.ts';
import type { MemoryConfig } from '../config.ts';

export const KEY_PATTERN = /^[A-Za-z0-9_.:-]+$/;

interface Row {
  key: string;
  value: string;
}

const UPSERT = `INSERT INTO memory_kv (agent_id, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (agent_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;

/** Per-agent key-value memory in memory_kv. Values are stored as JSON text. */
export class KvStore implements KvMemory {
  constructor(
    private readonly store: Store,
    private readonly config: () => MemoryConfig,
    private readonly now: () => number = Date.now,
    /** Told after each write (memory.updated on the bus). */
    private readonly changed: (change: MemoryChange) => void = () => undefined,
  ) {}

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

  async get(agentId: string, key: string): Promise<KvEntry | undefined> {
    const row = await this.store.one<Row>('SELECT key, value FROM memory_kv WHERE agent_id = ? AND key = ?', [agentId, key]);
    return row && decode(row);
  }

  async set(agentId: string, key: string, value: unknown): Promise<void> {
    this.checkKey(key);
    const at = new Date(this.now()).toISOString();
    await this.store.run(UPSERT, [agentId, key, this.encode(key, value), at, at]);
    this.changed({ agentId, operation: 'set', key });
  }

  async delete(agentId: string, key: string): Promise<boolean> {
    const gone = (await this.store.run('DELETE FROM memory_kv WHERE agent_id = ? AND key = ?', [agentId, key])).changes > 0;
    if (gone) this.changed({ agentId, operation: 'delete', key });
    return gone;
  }

  async list(agentId: string, page: { limit?: number; offset?: number } = {}): Promise<KvEntry[]> {
    // No limit: the largest exact integer (a negative LIMIT means "none" to SQLite only).
    const rows = await this.store.many<Row>('SELECT key, value FROM memory_kv WHERE agent_id = ? ORDER BY key LIMIT ? OFFSET ?', [
      agentId,
      page.limit ?? Number.MAX_SAFE_INTEGER,
      page.offset ?? 0,
    ]);
    return rows.map(decode);
  }

  async count(agentId?: string): Promise<number> {
    const row =
      agentId === undefined
        ? await this.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM memory_kv')
        : await this.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM memory_kv WHERE agent_id = ?', [agentId]);
    return row!.n;
  }

  async exportAll(agentId: string): Promise<KvEntry[]> {
    return (await this.store.many<Row>('SELECT key, value FROM memory_kv WHERE agent_id = ? ORDER BY key', [agentId])).map(decode);
  }

  /** Validates every entry first, then writes them all in one transaction (all or nothing); inside `q`'s when given. */
  async importAll(agentId: string, entries: KvEntry[], q: Queries = this.store): Promise<number> {
    const encoded = entries.map((e) => {
      if (typeof e?.key !== 'string') throw badRequest('every imported entry needs a string key');
      this.checkKey(e.key);
      return { key: e.key, text: this.encode(e.key, e.value) };
    });
    const at = new Date(this.now()).toISOString();
    await q.tx(async (t) => {
      for (const e of encoded) await t.run(UPSERT, [agentId, e.key, e.text, at, at]);
    });
    return encoded.length;
  }

  async deleteAgent(agentId: string): Promise<void> {
    await this.store.run('DELETE FROM memory_kv WHERE agent_id = ?', [agentId]);
  }
}

function decode(row: Row): KvEntry {
  return { key: row.key, value: JSON.parse(row.value) as unknown };
}

import * as sqliteVec from 'sqlite-vec';
import type { Queries, SqlValue, Store } from '@talon/module-sdk';
import type { Logger } from 'pino';
import { jsonList, sqliteOnly } from './sql.ts';

const TABLE_PREFIX = 'memory_vec_';

/**
 * Vector storage: full-precision f32 vectors in memory_embeddings (for exact
 * re-ranking) plus a sqlite-vec vec0 table per dimension holding the
 * binary-quantised vector, partitioned by agent, for the coarse KNN pass.
 * Binary KNN over 100k rows costs a few ms where float KNN costs ~60 ms.
 *
 * On PostgreSQL the binary-quantised vector is a BIT VARYING column of memory_embeddings (`quantized`) and the coarse
 * pass orders one agent's entries by Hamming distance, bit_count(a # b), in SQL: the same pass with no extension and
 * no table per dimension (cosine over REAL[] in SQL measured ~1 s per 20k vectors of 384 dimensions, the bit form
 * ~10 ms). On SQLite, which vec0 tables exist is cached; a process that creates one notes it (`learn` on the others),
 * or their searches would skip the KNN pass for that dimension until they restart.
 */
export class VectorIndex {
  private loaded = false;
  private readonly dims = new Set<number>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    /** Tells the other processes that a vec0 table was created (ctx.changes in the module). */
    private readonly created: (dim: number) => Promise<void> = async () => undefined,
  ) {}

  /** Whether the KNN pass runs (sqlite-vec loaded; always on PostgreSQL). */
  get available(): boolean {
    return this.loaded;
  }

  /** Loads sqlite-vec onto the connection and finds its tables (the module's start(): register() does no I/O). */
  async init(): Promise<void> {
    if (this.store.dialect !== 'sqlite') {
      this.loaded = true;
      await this.fillQuantized();
      return;
    }
    try {
      sqliteVec.load(this.store.sqlite());
      this.loaded = true;
    } catch (err) {
      this.log.warn({ err }, 'sqlite-vec could not be loaded; memory search uses FTS5 only');
      return;
    }
    const tables = await this.store.many<{ name: string }>(
      sqliteOnly(this.store, "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'memory_vec_[0-9]*'", 'listing vec0 tables'),
    );
    // The GLOB also matches a vec0 table's shadow tables (memory_vec_384_info): only the tables themselves count.
    for (const t of tables) {
      const suffix = t.name.slice(TABLE_PREFIX.length);
      if (/^\d+$/.test(suffix)) this.dims.add(Number(suffix));
    }
    await this.fillIndex();
  }

  /**
   * SQLite: vectors with no row in their dimension's vec0 table — restored from a PostgreSQL backup, which keeps the
   * quantised form in a column instead — get one, so that the coarse pass finds them. A dimension whose counts agree
   * costs two counts; the rest page by page, in entry order.
   */
  private async fillIndex(): Promise<void> {
    const PAGE = 500;
    const dims = await this.store.many<{ dim: number; n: number }>('SELECT dim, COUNT(*) AS n FROM memory_embeddings GROUP BY dim');
    for (const { dim, n } of dims.filter((d) => isDimension(d.dim))) {
      await this.ensureTable(dim);
      const table = `${TABLE_PREFIX}${dim}`;
      const indexed = await this.store.one<{ n: number }>(sqliteOnly(this.store, `SELECT COUNT(*) AS n FROM ${table}`, 'vec0 count'));
      if (indexed?.n === n) continue;
      for (let after = 0; ;) {
        const rows = await this.store.many<{ seq: number; vector: Buffer; agent_id: string | null }>(
          sqliteOnly(
            this.store,
            `SELECT e.entry_seq AS seq, e.vector, m.agent_id FROM memory_embeddings e JOIN memory_entries m ON m.seq = e.entry_seq
              WHERE e.dim = ? AND e.entry_seq > ? AND e.entry_seq NOT IN (SELECT rowid FROM ${table}) ORDER BY e.entry_seq LIMIT ?`,
            'vec0 fill',
          ),
          [dim, after, PAGE],
        );
        for (const row of rows) await indexVector(this.store, dim, row.seq, row.agent_id, row.vector);
        if (rows.length < PAGE) break;
        after = rows[rows.length - 1]!.seq;
      }
    }
  }

  /**
   * PostgreSQL: vectors stored without their quantised form — restored from a SQLite backup, whose index was a vec0
   * table — get it, so that the coarse pass finds them. Page by page, in entry order.
   */
  private async fillQuantized(): Promise<void> {
    const PAGE = 500;
    for (let after = 0; ;) {
      const rows = await this.store.many<{ entry_seq: number; vector: Buffer }>(
        'SELECT entry_seq, vector FROM memory_embeddings WHERE quantized IS NULL AND entry_seq > ? ORDER BY entry_seq LIMIT ?',
        [after, PAGE],
      );
      for (const row of rows)
        await this.store.run('UPDATE memory_embeddings SET quantized = CAST(? AS BIT VARYING) WHERE entry_seq = ?', [
          quantize(fromBlob(row.vector)),
          row.entry_seq,
        ]);
      if (rows.length < PAGE) return;
      after = rows[rows.length - 1]!.entry_seq;
    }
  }

  /** Another process created the vec0 table of this dimension. */
  learn(dim: number): void {
    if (this.loaded && this.store.dialect === 'sqlite' && isDimension(dim)) this.dims.add(dim);
  }

  /**
   * Creates the vec0 table of a dimension when it is new (its own statement, before the transaction that fills it:
   * a cached table that a rolled-back transaction never made would fail every later search).
   */
  async ensureTable(dim: number): Promise<void> {
    if (!this.loaded || this.dims.has(dim)) return;
    if (!isDimension(dim)) throw new Error(`unsupported embedding dimension ${dim}`);
    if (this.store.dialect !== 'sqlite') return;
    const name = `${TABLE_PREFIX}${dim}`;
    await this.store.exec(
      sqliteOnly(
        this.store,
        `CREATE VIRTUAL TABLE IF NOT EXISTS ${name} USING vec0 (agent_id TEXT PARTITION KEY, embedding BIT[${dim}]);
        CREATE TRIGGER IF NOT EXISTS ${name}_ad AFTER DELETE ON memory_embeddings WHEN old.dim = ${dim} BEGIN
          DELETE FROM ${name} WHERE rowid = old.entry_seq;
        END;`,
        'a vec0 table',
      ),
    );
    this.dims.add(dim);
    await this.created(dim);
  }

  /** Stores (or replaces) the vector of one entry, in the caller's transaction (ensureTable first). */
  async put(t: Queries, seq: number, agentId: string | null, model: string, vector: Float32Array): Promise<void> {
    await t.run('DELETE FROM memory_embeddings WHERE entry_seq = ?', [seq]);
    if (t.dialect !== 'sqlite') {
      await t.run('INSERT INTO memory_embeddings (entry_seq, model, dim, vector, quantized) VALUES (?, ?, ?, ?, CAST(? AS BIT VARYING))', [
        seq,
        model,
        vector.length,
        toBlob(vector),
        quantize(vector),
      ]);
      return;
    }
    await t.run('INSERT INTO memory_embeddings (entry_seq, model, dim, vector) VALUES (?, ?, ?, ?)', [seq, model, vector.length, toBlob(vector)]);
    if (!this.loaded || !this.dims.has(vector.length)) return;
    await indexVector(t, vector.length, seq, agentId, toBlob(vector));
  }

  /** Coarse candidates by Hamming distance of the quantised vectors. */
  async nearest(query: Float32Array, k: number, agentId?: string): Promise<number[]> {
    if (this.store.dialect !== 'sqlite') return this.nearestInSql(query, k, agentId);
    if (!this.loaded || !this.dims.has(query.length)) return [];
    const where = agentId === undefined ? '' : ' AND agent_id = ?';
    const args: SqlValue[] = [toBlob(query), k];
    if (agentId !== undefined) args.push(agentId);
    const sql = `SELECT rowid FROM ${TABLE_PREFIX}${query.length} WHERE embedding MATCH vec_quantize_binary(?) AND k = ?${where}`;
    const rows = await this.store.many<{ rowid: number }>(sqliteOnly(this.store, sql, 'vector KNN'), args);
    return rows.map((r) => Number(r.rowid));
  }

  /**
   * PostgreSQL's coarse pass: the k entries (of the agent, when given) whose quantised vector of the query's dimension
   * is nearest by Hamming distance, newest first among equals.
   */
  private async nearestInSql(query: Float32Array, k: number, agentId?: string): Promise<number[]> {
    if (!isDimension(query.length)) return [];
    const [join, where, args]: [string, string, SqlValue[]] =
      agentId === undefined ? ['', '', []] : [' JOIN memory_entries m ON m.seq = v.entry_seq', ' AND m.agent_id = ?', [agentId]];
    const rows = await this.store.many<{ seq: number }>(
      `SELECT v.entry_seq AS seq FROM memory_embeddings v${join} WHERE v.dim = ? AND v.quantized IS NOT NULL${where}
       ORDER BY bit_count(v.quantized # CAST(? AS BIT VARYING)), v.entry_seq DESC LIMIT ?`,
      [query.length, ...args, quantize(query), k],
    );
    return rows.map((r) => r.seq);
  }

  /** Full-precision vectors of some entries, for exact cosine re-ranking. */
  async vectors(seqs: number[], model: string, q: Queries = this.store): Promise<Map<number, Float32Array>> {
    const out = new Map<number, Float32Array>();
    if (!seqs.length) return out;
    const rows = await q.many<{ entry_seq: number; vector: Uint8Array }>(
      `SELECT entry_seq, vector FROM memory_embeddings WHERE model = ? AND entry_seq IN ${jsonList(q, 'integer')}`,
      [model, JSON.stringify(seqs)],
    );
    for (const r of rows) out.set(r.entry_seq, fromBlob(r.vector));
    return out;
  }
}

/** SQLite: an entry's binary-quantised vector into its dimension's vec0 table (the agent is its partition). */
async function indexVector(q: Queries, dim: number, seq: number, agentId: string | null, vector: Buffer): Promise<void> {
  await q.run(sqliteOnly(q, `INSERT INTO ${TABLE_PREFIX}${dim} (rowid, agent_id, embedding) VALUES (?, ?, vec_quantize_binary(?))`, 'vec0'), [
    BigInt(seq),
    agentId ?? '',
    vector,
  ]);
}

const isDimension = (dim: number) => Number.isInteger(dim) && dim > 0 && dim <= 8192 && dim % 8 === 0;

/** A vector binary-quantised as a bit string ('1' where a component is positive), as sqlite-vec's vec_quantize_binary. */
export function quantize(v: Float32Array): string {
  let bits = '';
  for (const x of v) bits += x > 0 ? '1' : '0';
  return bits;
}

export function toBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function fromBlob(b: Uint8Array): Float32Array {
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float32Array(copy.buffer);
}

export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

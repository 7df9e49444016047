import type { Database } from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { statements } from '@talon/module-sdk';
import type { Logger } from 'pino';

/**
 * Vector storage: full-precision f32 vectors in memory_embeddings (for exact
 * re-ranking) plus a sqlite-vec vec0 table per dimension holding the
 * binary-quantised vector, partitioned by agent, for the coarse KNN pass.
 * Binary KNN over 100k rows costs a few ms where float KNN costs ~60 ms.
 */
export class VectorIndex {
  readonly available: boolean;
  private readonly dims = new Set<number>();
  private readonly prepare: ReturnType<typeof statements>;

  constructor(
    private readonly db: Database,
    log: Logger,
  ) {
    this.prepare = statements(db);
    let ok = false;
    try {
      sqliteVec.load(db);
      ok = true;
    } catch (err) {
      log.warn({ err }, 'sqlite-vec could not be loaded; memory search uses FTS5 only');
    }
    this.available = ok;
    if (ok) {
      const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'memory_vec_[0-9]*'").all();
      for (const t of tables) this.dims.add(Number(t.name.slice('memory_vec_'.length)));
    }
  }

  private table(dim: number): string {
    if (!Number.isInteger(dim) || dim <= 0 || dim > 8192 || dim % 8 !== 0) throw new Error(`unsupported embedding dimension ${dim}`);
    if (!this.dims.has(dim)) {
      const name = `memory_vec_${dim}`;
      this.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${name} USING vec0 (agent_id TEXT PARTITION KEY, embedding BIT[${dim}]);
        CREATE TRIGGER IF NOT EXISTS ${name}_ad AFTER DELETE ON memory_embeddings WHEN old.dim = ${dim} BEGIN
          DELETE FROM ${name} WHERE rowid = old.entry_seq;
        END;`);
      this.dims.add(dim);
    }
    return `memory_vec_${dim}`;
  }

  /** Stores (or replaces) the vector of one entry. Call inside a transaction for batches. */
  put(seq: number, agentId: string | null, model: string, vector: Float32Array): void {
    this.prepare('DELETE FROM memory_embeddings WHERE entry_seq = ?').run(seq);
    this.prepare('INSERT INTO memory_embeddings (entry_seq, model, dim, vector) VALUES (?, ?, ?, ?)').run(seq, model, vector.length, toBlob(vector));
    if (!this.available) return;
    const table = this.table(vector.length);
    this.prepare(`INSERT INTO ${table} (rowid, agent_id, embedding) VALUES (?, ?, vec_quantize_binary(?))`).run(BigInt(seq), agentId ?? '', toBlob(vector));
  }

  /** Coarse candidates by Hamming distance of the quantised vectors. */
  nearest(query: Float32Array, k: number, agentId?: string): number[] {
    if (!this.available || !this.dims.has(query.length)) return [];
    const table = `memory_vec_${query.length}`;
    const where = agentId === undefined ? '' : ' AND agent_id = ?';
    const args: unknown[] = [toBlob(query), k];
    if (agentId !== undefined) args.push(agentId);
    const rows = this.prepare<unknown[], { rowid: number }>(`SELECT rowid FROM ${table} WHERE embedding MATCH vec_quantize_binary(?) AND k = ?${where}`).all(
      ...args,
    );
    return rows.map((r) => Number(r.rowid));
  }

  /** Full-precision vectors of some entries, for exact cosine re-ranking. */
  vectors(seqs: number[], model: string): Map<number, Float32Array> {
    const out = new Map<number, Float32Array>();
    if (!seqs.length) return out;
    const rows = this.prepare<unknown[], { entry_seq: number; vector: Buffer }>(
      `SELECT entry_seq, vector FROM memory_embeddings WHERE model = ? AND entry_seq IN (SELECT value FROM json_each(?))`,
    ).all(model, JSON.stringify(seqs));
    for (const r of rows) out.set(r.entry_seq, fromBlob(r.vector));
    return out;
  }
}

export function toBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function fromBlob(b: Buffer): Float32Array {
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

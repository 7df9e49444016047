import { randomUUID } from 'node:crypto';
import type { Queries, SqlValue, Store } from '@talon/module-sdk';

export interface Relation {
  id: string;
  agent_id: string;
  subject: string;
  relation: string;
  object: string;
  confidence: number;
  source_memory_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface RelationInput {
  /** Kept when free (imports); otherwise a new UUID. */
  id?: string;
  subject: string;
  relation: string;
  object: string;
  confidence?: number;
  source_memory_id?: string | null;
  created_at?: string;
  updated_at?: string;
}

export interface RelationQuery {
  subject?: string;
  relation?: string;
  object?: string;
  /** Matches subject or object. */
  entity?: string;
  min_confidence?: number;
}

interface Row extends Omit<Relation, 'created_at' | 'updated_at'> {
  created_at: number;
  updated_at: number;
}

const toRelation = (r: Row): Relation => ({ ...r, created_at: new Date(r.created_at).toISOString(), updated_at: new Date(r.updated_at).toISOString() });

/** relation names are lower-case snake_case. */
const relationName = (text: string) =>
  text
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

/** A case-insensitive equality on a name column: SQLite's NOCASE uses the NOCASE indexes of the migration. */
const sameName = (q: Queries, column: string) => q.pick({ sqlite: `${column} = ? COLLATE NOCASE`, postgres: `LOWER(${column}) = LOWER(?)` });

/** The relation graph: (subject, relation, object) triples per agent with a confidence. */
export class RelationStore {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /** Stores a triple; the same triple again updates its confidence. Names are trimmed; relation is lower-case snake_case. */
  upsert(agentId: string, input: RelationInput, q: Queries = this.store): Promise<Relation> {
    const now = this.now();
    // One transaction (a savepoint inside the caller's), so the id found free is still free at the insert.
    return q.tx(async (t) => {
      const taken = input.id !== undefined && (await t.one('SELECT 1 AS one FROM memory_relations WHERE id = ?', [input.id])) !== undefined;
      const row = await t.one<Row>(
        `INSERT INTO memory_relations (id, agent_id, subject, relation, object, confidence, source_memory_id, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (agent_id, subject, relation, object) DO UPDATE SET confidence = excluded.confidence,
             source_memory_id = COALESCE(excluded.source_memory_id, memory_relations.source_memory_id), updated_at = excluded.updated_at
           RETURNING *`,
        [
          input.id !== undefined && !taken ? input.id : randomUUID(),
          agentId,
          input.subject.trim(),
          relationName(input.relation),
          input.object.trim(),
          input.confidence ?? 1,
          input.source_memory_id ?? null,
          input.created_at ? Date.parse(input.created_at) : now,
          input.updated_at ? Date.parse(input.updated_at) : now,
        ],
      );
      return toRelation(row!);
    });
  }

  async query(agentId: string, q: RelationQuery, page: { limit: number; offset: number }): Promise<{ relations: Relation[]; total: number }> {
    const parts = ['agent_id = ?'];
    const args: SqlValue[] = [agentId];
    const s = this.store;
    if (q.subject !== undefined) (parts.push(sameName(s, 'subject')), args.push(q.subject));
    if (q.relation !== undefined) (parts.push(sameName(s, 'relation')), args.push(relationName(q.relation)));
    if (q.object !== undefined) (parts.push(sameName(s, 'object')), args.push(q.object));
    if (q.entity !== undefined) (parts.push(`(${sameName(s, 'subject')} OR ${sameName(s, 'object')})`), args.push(q.entity, q.entity));
    if (q.min_confidence !== undefined) (parts.push('confidence >= ?'), args.push(q.min_confidence));
    const where = parts.join(' AND ');
    const total = (await s.one<{ n: number }>(`SELECT COUNT(*) AS n FROM memory_relations WHERE ${where}`, args))!.n;
    const rows = await s.many<Row>(`SELECT * FROM memory_relations WHERE ${where} ORDER BY confidence DESC, created_at, id LIMIT ? OFFSET ?`, [
      ...args,
      page.limit,
      page.offset,
    ]);
    return { relations: rows.map(toRelation), total };
  }

  async all(agentId: string): Promise<Relation[]> {
    return (await this.store.many<Row>('SELECT * FROM memory_relations WHERE agent_id = ? ORDER BY created_at, id', [agentId])).map(toRelation);
  }

  async deleteAgent(agentId: string): Promise<number> {
    return (await this.store.run('DELETE FROM memory_relations WHERE agent_id = ?', [agentId])).changes;
  }
}

import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { statements } from '@talon/module-sdk';

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

/** The relation graph: (subject, relation, object) triples per agent with a confidence. */
export class RelationStore {
  constructor(
    db: Database,
    private readonly now: () => number = Date.now,
  ) {
    this.prepare = statements(db);
  }

  private readonly prepare: ReturnType<typeof statements>;

  /** Stores a triple; the same triple again updates its confidence. Names are trimmed; relation is lower-case snake_case. */
  upsert(agentId: string, input: RelationInput): Relation {
    const now = this.now();
    const taken = input.id !== undefined && this.prepare('SELECT 1 FROM memory_relations WHERE id = ?').get(input.id) !== undefined;
    const relation = input.relation
      .trim()
      .toLowerCase()
      .replace(/[\s-]+/g, '_');
    const row = this.prepare<unknown[], Row>(
      `INSERT INTO memory_relations (id, agent_id, subject, relation, object, confidence, source_memory_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (agent_id, subject, relation, object) DO UPDATE SET confidence = excluded.confidence,
           source_memory_id = COALESCE(excluded.source_memory_id, source_memory_id), updated_at = excluded.updated_at
         RETURNING *`,
    ).get(
      input.id !== undefined && !taken ? input.id : randomUUID(),
      agentId,
      input.subject.trim(),
      relation,
      input.object.trim(),
      input.confidence ?? 1,
      input.source_memory_id ?? null,
      input.created_at ? Date.parse(input.created_at) : now,
      input.updated_at ? Date.parse(input.updated_at) : now,
    )!;
    return toRelation(row);
  }

  query(agentId: string, q: RelationQuery, page: { limit: number; offset: number }): { relations: Relation[]; total: number } {
    const parts = ['agent_id = ?'];
    const args: unknown[] = [agentId];
    if (q.subject !== undefined) (parts.push('subject = ? COLLATE NOCASE'), args.push(q.subject));
    if (q.relation !== undefined)
      (parts.push('relation = ? COLLATE NOCASE'),
        args.push(
          q.relation
            .trim()
            .toLowerCase()
            .replace(/[\s-]+/g, '_'),
        ));
    if (q.object !== undefined) (parts.push('object = ? COLLATE NOCASE'), args.push(q.object));
    if (q.entity !== undefined) (parts.push('(subject = ? COLLATE NOCASE OR object = ? COLLATE NOCASE)'), args.push(q.entity, q.entity));
    if (q.min_confidence !== undefined) (parts.push('confidence >= ?'), args.push(q.min_confidence));
    const where = parts.join(' AND ');
    const total = this.prepare<unknown[], { n: number }>(`SELECT COUNT(*) AS n FROM memory_relations WHERE ${where}`).get(...args)!.n;
    const rows = this.prepare<unknown[], Row>(`SELECT * FROM memory_relations WHERE ${where} ORDER BY confidence DESC, created_at, id LIMIT ? OFFSET ?`).all(
      ...args,
      page.limit,
      page.offset,
    );
    return { relations: rows.map(toRelation), total };
  }

  all(agentId: string): Relation[] {
    return this.prepare<[string], Row>('SELECT * FROM memory_relations WHERE agent_id = ? ORDER BY created_at, id').all(agentId).map(toRelation);
  }

  deleteAgent(agentId: string): number {
    return this.prepare('DELETE FROM memory_relations WHERE agent_id = ?').run(agentId).changes;
  }
}

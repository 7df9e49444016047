/** Goals in SQLite: a tree (parent_id), cycles refused, a delete takes the whole subtree. */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { badRequest, statements } from '@talon/module-sdk';

export const STATUSES = ['pending', 'in_progress', 'completed', 'cancelled'] as const;
export type GoalStatus = (typeof STATUSES)[number];

export interface Goal {
  id: string;
  title: string;
  description: string;
  status: GoalStatus;
  progress: number;
  agent_id: string | null;
  parent_id: string | null;
  due_at: string | null;
  created_at: string;
  updated_at: string;
}

export type GoalFields = Pick<Goal, 'title' | 'description' | 'status' | 'progress' | 'agent_id' | 'parent_id' | 'due_at'>;

const COLUMNS = 'id, title, description, status, progress, agent_id, parent_id, due_at, created_at, updated_at';
const FIELDS = ['title', 'description', 'status', 'progress', 'agent_id', 'parent_id', 'due_at'] as const;

export class GoalStore {
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly db: Database) {
    this.sql = statements(db);
  }

  create(fields: GoalFields): Goal {
    const id = randomUUID();
    const at = new Date().toISOString();
    this.sql(`INSERT INTO goals_goals (id, ${FIELDS.join(', ')}, created_at, updated_at) VALUES (?, ${FIELDS.map(() => '?').join(', ')}, ?, ?)`).run(
      id,
      ...FIELDS.map((f) => fields[f]),
      at,
      at,
    );
    return this.get(id)!;
  }

  /** Several goals at once, all or none (a template's tree). */
  createMany(make: (create: (fields: GoalFields) => Goal) => void): void {
    this.db.transaction(() => make((f) => this.create(f)))();
  }

  get(id: string): Goal | undefined {
    return this.sql<[string], Goal>(`SELECT ${COLUMNS} FROM goals_goals WHERE id = ?`).get(id);
  }

  list(filter: { status?: string; agentId?: string; parentId?: string | null }): Goal[] {
    const where: string[] = [];
    const params: string[] = [];
    if (filter.status) (where.push('status = ?'), params.push(filter.status));
    if (filter.agentId) (where.push('agent_id = ?'), params.push(filter.agentId));
    if (filter.parentId === null) where.push('parent_id IS NULL');
    else if (filter.parentId) (where.push('parent_id = ?'), params.push(filter.parentId));
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    return this.sql<string[], Goal>(`SELECT ${COLUMNS} FROM goals_goals ${clause} ORDER BY seq`).all(...params);
  }

  update(id: string, fields: GoalFields): Goal {
    if (fields.parent_id !== null) this.refuseCycle(id, fields.parent_id);
    this.sql(`UPDATE goals_goals SET ${FIELDS.map((f) => `${f} = ?`).join(', ')}, updated_at = ? WHERE id = ?`).run(
      ...FIELDS.map((f) => fields[f]),
      new Date().toISOString(),
      id,
    );
    return this.get(id)!;
  }

  /** Deletes the goal and every descendant; returns how many goals went. */
  delete(id: string): number {
    const n = this.sql<[string], { n: number }>(
      `WITH RECURSIVE tree(id) AS (SELECT id FROM goals_goals WHERE id = ? UNION ALL SELECT g.id FROM goals_goals g JOIN tree ON g.parent_id = tree.id)
       SELECT COUNT(*) AS n FROM tree`,
    ).get(id)!.n;
    this.sql('DELETE FROM goals_goals WHERE id = ?').run(id);
    return n;
  }

  /** 400 when the new parent is the goal itself or one of its descendants. */
  private refuseCycle(id: string, parentId: string): void {
    const cycle = this.sql<[string, string], { id: string }>(
      `WITH RECURSIVE up(id, parent_id) AS (SELECT id, parent_id FROM goals_goals WHERE id = ?
         UNION ALL SELECT g.id, g.parent_id FROM goals_goals g JOIN up ON g.id = up.parent_id)
       SELECT id FROM up WHERE id = ? LIMIT 1`,
    ).get(parentId, id);
    if (cycle) throw badRequest(`parent_id '${parentId}' would make a cycle: it is this goal or one of its descendants`);
  }
}

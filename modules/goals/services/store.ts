/** Goals in the store: a tree (parent_id), cycles refused, a delete takes the whole subtree. */
import { randomUUID } from 'node:crypto';
import { badRequest, type Queries, type Store } from '@talon/module-sdk';

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
  constructor(private readonly store: Store) {}

  async create(fields: GoalFields): Promise<Goal> {
    return insert(this.store, fields);
  }

  /** Several goals at once, all or none (a template's tree): `make` creates them through its argument. */
  createMany<T>(make: (create: (fields: GoalFields) => Promise<Goal>) => Promise<T>): Promise<T> {
    return this.store.tx((t) => make((f) => insert(t, f)));
  }

  get(id: string): Promise<Goal | undefined> {
    return this.store.one<Goal>(`SELECT ${COLUMNS} FROM goals_goals WHERE id = ?`, [id]);
  }

  list(filter: { status?: string; agentId?: string; parentId?: string | null }): Promise<Goal[]> {
    const where: string[] = [];
    const params: string[] = [];
    if (filter.status) (where.push('status = ?'), params.push(filter.status));
    if (filter.agentId) (where.push('agent_id = ?'), params.push(filter.agentId));
    if (filter.parentId === null) where.push('parent_id IS NULL');
    else if (filter.parentId) (where.push('parent_id = ?'), params.push(filter.parentId));
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    return this.store.many<Goal>(`SELECT ${COLUMNS} FROM goals_goals ${clause} ORDER BY seq`, params);
  }

  /** The cycle check and the write in one transaction, so a concurrent move cannot slip a cycle in between. */
  async update(id: string, fields: GoalFields): Promise<Goal> {
    return this.store.tx(async (t) => {
      if (fields.parent_id !== null) await refuseCycle(t, id, fields.parent_id);
      await t.run(`UPDATE goals_goals SET ${FIELDS.map((f) => `${f} = ?`).join(', ')}, updated_at = ? WHERE id = ?`, [
        ...FIELDS.map((f) => fields[f]),
        new Date().toISOString(),
        id,
      ]);
      return (await t.one<Goal>(`SELECT ${COLUMNS} FROM goals_goals WHERE id = ?`, [id]))!;
    });
  }

  /** Deletes the goal and every descendant; returns how many goals went. */
  async delete(id: string): Promise<number> {
    return this.store.tx(async (t) => {
      const counted = await t.one<{ n: number }>(
        `WITH RECURSIVE tree(id) AS (SELECT id FROM goals_goals WHERE id = ? UNION ALL SELECT g.id FROM goals_goals g JOIN tree ON g.parent_id = tree.id)
         SELECT COUNT(*) AS n FROM tree`,
        [id],
      );
      await t.run('DELETE FROM goals_goals WHERE id = ?', [id]);
      return Number(counted?.n ?? 0);
    });
  }
}

async function insert(q: Queries, fields: GoalFields): Promise<Goal> {
  const at = new Date().toISOString();
  const row = await q.one<Goal>(
    `INSERT INTO goals_goals (id, ${FIELDS.join(', ')}, created_at, updated_at) VALUES (?, ${FIELDS.map(() => '?').join(', ')}, ?, ?) RETURNING ${COLUMNS}`,
    [randomUUID(), ...FIELDS.map((f) => fields[f]), at, at],
  );
  return row!;
}

/** 400 when the new parent is the goal itself or one of its descendants. */
async function refuseCycle(q: Queries, id: string, parentId: string): Promise<void> {
  const cycle = await q.one<{ id: string }>(
    `WITH RECURSIVE up(id, parent_id) AS (SELECT id, parent_id FROM goals_goals WHERE id = ?
       UNION ALL SELECT g.id, g.parent_id FROM goals_goals g JOIN up ON g.id = up.parent_id)
     SELECT id FROM up WHERE id = ? LIMIT 1`,
    [parentId, id],
  );
  if (cycle) throw badRequest(`parent_id '${parentId}' would make a cycle: it is this goal or one of its descendants`);
}

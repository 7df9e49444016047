/**
 * The task board in SQLite: pending → in_progress → completed / failed, cancelled. Every move is one conditional
 * UPDATE, so two claimers (or two nodes on one database) never both get a task.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { badRequest, conflict, notFound, statements, type EventAccess } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { PostTask, Task, TaskBoard, TaskStatus } from '../api.ts';
import type { TasksConfig } from '../config.ts';

interface Row {
  id: string;
  title: string;
  description: string;
  status: TaskStatus;
  posted_to: string | null;
  assigned_to: string | null;
  created_by: string | null;
  created_at: string;
  claimed_at: string | null;
  completed_at: string | null;
  result: string | null;
  retry_count: number;
}

export const STATUSES: readonly TaskStatus[] = ['pending', 'in_progress', 'completed', 'failed', 'cancelled'];
const MAX_TITLE = 512;
const MAX_TEXT = 64_000;

export interface BoardDeps {
  db: Database;
  events: Pick<EventAccess, 'publish'>;
  config: () => TasksConfig;
  agents: () => AgentRegistry | undefined;
  now?: () => number;
}

export class Board implements TaskBoard {
  private readonly sql: ReturnType<typeof statements>;
  private readonly now: () => number;

  constructor(private readonly deps: BoardDeps) {
    this.sql = statements(deps.db);
    this.now = deps.now ?? Date.now;
  }

  post(input: PostTask): Task {
    const title = input.title.trim();
    if (!title) throw badRequest('title must not be empty');
    if (title.length > MAX_TITLE) throw badRequest(`title is ${title.length} characters; the limit is ${MAX_TITLE}`);
    const description = input.description ?? '';
    if (description.length > MAX_TEXT) throw badRequest(`description is ${description.length} characters; the limit is ${MAX_TEXT}`);
    const id = randomUUID();
    const assignee = input.assignedTo?.trim() || null;
    this.sql(
      `INSERT INTO tasks_tasks (id, title, description, status, posted_to, assigned_to, created_by, created_at)
       VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)`,
    ).run(id, title, description, assignee, assignee, input.createdBy?.trim() || null, this.iso());
    const task = this.get(id)!;
    this.announce(task);
    return task;
  }

  get(id: string): Task | undefined {
    const row = this.sql<[string], Row>('SELECT * FROM tasks_tasks WHERE id = ?').get(id);
    return row && toTask(row);
  }

  /** Tasks newest first, optionally of one status. */
  list(filter: { status?: TaskStatus; assignedTo?: string; limit: number; offset: number }): { tasks: Task[]; total: number } {
    this.sweep();
    const where: string[] = [];
    const params: string[] = [];
    if (filter.status) (where.push('status = ?'), params.push(filter.status));
    if (filter.assignedTo) (where.push('(assigned_to = ? OR posted_to = ?)'), params.push(filter.assignedTo, filter.assignedTo));
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = this.sql<string[], { n: number }>(`SELECT COUNT(*) AS n FROM tasks_tasks ${clause}`).get(...params)!.n;
    const rows = this.sql<unknown[], Row>(`SELECT * FROM tasks_tasks ${clause} ORDER BY seq DESC LIMIT ? OFFSET ?`).all(...params, filter.limit, filter.offset);
    return { tasks: rows.map(toTask), total };
  }

  counts(): Record<TaskStatus, number> & { total: number } {
    this.sweep();
    const rows = this.sql<[], { status: TaskStatus; n: number }>('SELECT status, COUNT(*) AS n FROM tasks_tasks GROUP BY status').all();
    const counts = { total: 0, pending: 0, in_progress: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const r of rows) {
      counts[r.status] = r.n;
      counts.total += r.n;
    }
    return counts;
  }

  /** Tasks that reached completed or failed in the last `ms`. */
  finishedSince(ms: number): number {
    const since = new Date(this.now() - ms).toISOString();
    return this.sql<[string], { n: number }>("SELECT COUNT(*) AS n FROM tasks_tasks WHERE status IN ('completed', 'failed') AND completed_at >= ?").get(since)!
      .n;
  }

  claim(agentId: string, taskId?: string): Task | undefined {
    this.sweep();
    const agent = this.deps.agents()?.get(agentId);
    const name = agent?.name ?? agentId;
    const mine = "status = 'pending' AND (posted_to IS NULL OR posted_to = ? OR lower(posted_to) = lower(?))";
    const candidate = taskId
      ? this.sql<[string, string, string], { id: string }>(`SELECT id FROM tasks_tasks WHERE id = ? AND ${mine}`).get(taskId, agentId, name)
      : this.sql<[string, string], { id: string }>(`SELECT id FROM tasks_tasks WHERE ${mine} ORDER BY posted_to IS NULL, seq LIMIT 1`).get(agentId, name);
    if (!candidate) return undefined;
    const deadline = this.now() + this.deps.config().claim_timeout_secs * 1000;
    const changed = this.sql(
      "UPDATE tasks_tasks SET status = 'in_progress', assigned_to = ?, claimed_at = ?, claim_deadline = ? WHERE id = ? AND status = 'pending'",
    ).run(agentId, this.iso(), deadline, candidate.id).changes;
    if (!changed) return undefined;
    const task = this.get(candidate.id)!;
    this.deps.events.publish('task.claimed', { taskId: task.id, title: task.title, agentId });
    return task;
  }

  complete(agentId: string, taskId: string, result: string, status: 'completed' | 'failed' = 'completed'): Task {
    const task = this.get(taskId);
    if (!task) throw notFound(`task '${taskId}' not found`);
    if (task.status !== 'in_progress' || task.assigned_to !== agentId) {
      throw conflict(
        `task '${taskId}' is ${task.status}${task.status === 'in_progress' ? ' by another agent' : ''}; only the agent that claimed it can complete it`,
      );
    }
    const done = this.finish(taskId, status, result.slice(0, MAX_TEXT), agentId, "status = 'in_progress' AND assigned_to = ?", [agentId]);
    if (!done) throw conflict(`task '${taskId}' is no longer in progress`);
    return done;
  }

  /** DELETE /api/tasks/{id}: a pending or claimed task becomes cancelled (it stays listed). */
  cancel(taskId: string): Task {
    const task = this.get(taskId);
    if (!task) throw notFound(`task '${taskId}' not found`);
    if (task.status !== 'pending' && task.status !== 'in_progress')
      throw conflict(`task '${taskId}' is ${task.status}; only pending or in_progress tasks can be cancelled`);
    const done = this.finish(taskId, 'cancelled', null, undefined, "status IN ('pending', 'in_progress')", []);
    if (!done) throw conflict(`task '${taskId}' is no longer pending or in progress`);
    return done;
  }

  /** POST /api/tasks/{id}/retry: a failed or cancelled task goes back to pending for its original assignee. */
  retry(taskId: string): Task {
    const task = this.get(taskId);
    if (!task) throw notFound(`task '${taskId}' not found`);
    const changed = this.sql(
      `UPDATE tasks_tasks SET status = 'pending', assigned_to = posted_to, claimed_at = NULL, claim_deadline = NULL, completed_at = NULL,
       result = NULL, retry_count = retry_count + 1 WHERE id = ? AND status IN ('failed', 'cancelled')`,
    ).run(taskId).changes;
    if (!changed) throw conflict(`task '${taskId}' is ${task.status}; only failed or cancelled tasks can be retried`);
    const again = this.get(taskId)!;
    this.announce(again);
    return again;
  }

  /** Claims past their deadline go back to pending, or fail once max_retries timeouts are used up. */
  sweep(): void {
    const now = this.now();
    const expired = this.sql<[number], { id: string; retry_count: number }>(
      "SELECT id, retry_count FROM tasks_tasks WHERE status = 'in_progress' AND claim_deadline <= ?",
    ).all(now);
    const max = this.deps.config().max_retries;
    for (const t of expired) {
      if (max > 0 && t.retry_count + 1 > max) {
        this.finish(t.id, 'failed', `claim timed out ${t.retry_count + 1} times`, undefined, "status = 'in_progress' AND claim_deadline <= ?", [now]);
        continue;
      }
      const changed = this.sql(
        `UPDATE tasks_tasks SET status = 'pending', assigned_to = posted_to, claimed_at = NULL, claim_deadline = NULL, retry_count = retry_count + 1
         WHERE id = ? AND status = 'in_progress' AND claim_deadline <= ?`,
      ).run(t.id, now).changes;
      if (changed) this.announce(this.get(t.id)!);
    }
  }

  /** Tasks an agent holds go back to pending (the agent was killed). */
  releaseAgent(agentId: string): void {
    const held = this.sql<[string], { id: string }>("SELECT id FROM tasks_tasks WHERE status = 'in_progress' AND assigned_to = ?").all(agentId);
    for (const t of held) {
      const changed = this.sql(
        "UPDATE tasks_tasks SET status = 'pending', assigned_to = posted_to, claimed_at = NULL, claim_deadline = NULL WHERE id = ? AND status = 'in_progress'",
      ).run(t.id).changes;
      if (changed) this.announce(this.get(t.id)!);
    }
  }

  /** Moves a task to a final state when `guard` still holds; undefined when it no longer did (someone else moved it). */
  private finish(taskId: string, status: TaskStatus, result: string | null, agentId: string | undefined, guard: string, params: unknown[]): Task | undefined {
    const changed = this.sql(`UPDATE tasks_tasks SET status = ?, result = ?, completed_at = ?, claim_deadline = NULL WHERE id = ? AND ${guard}`).run(
      status,
      result,
      this.iso(),
      taskId,
      ...params,
    ).changes;
    if (!changed) return undefined;
    const task = this.get(taskId)!;
    this.deps.events.publish('task.completed', {
      taskId,
      title: task.title,
      agentId,
      status: status as 'completed' | 'failed' | 'cancelled',
      result: result ?? undefined,
    });
    return task;
  }

  private announce(task: Task): void {
    this.deps.events.publish('task.posted', {
      taskId: task.id,
      title: task.title,
      assignedTo: task.assigned_to ?? undefined,
      createdBy: task.created_by ?? undefined,
    });
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }
}

function toTask(row: Row): Task {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    status: row.status,
    assigned_to: row.assigned_to,
    created_by: row.created_by,
    created_at: row.created_at,
    claimed_at: row.claimed_at,
    completed_at: row.completed_at,
    result: row.result,
    retry_count: row.retry_count,
  };
}

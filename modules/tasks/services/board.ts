/**
 * The task board in the store: pending → in_progress → completed / failed, cancelled. Every move is one conditional
 * UPDATE, so two claimers (or two nodes on one database) never both get a task.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, conflict, notFound, type EventChannel, type SqlValue, type Store } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { PostTask, Task, TaskBoard, taskEvents, TaskStatus } from '../api.ts';
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
  store: Store;
  events: Pick<EventChannel<typeof taskEvents>, 'publish'>;
  config: () => TasksConfig;
  agents: () => AgentRegistry | undefined;
  now?: () => number;
}

export class Board implements TaskBoard {
  private readonly now: () => number;
  private readonly store: Store;

  constructor(private readonly deps: BoardDeps) {
    this.now = deps.now ?? Date.now;
    this.store = deps.store;
  }

  async post(input: PostTask): Promise<Task> {
    const title = input.title.trim();
    if (!title) throw badRequest('title must not be empty');
    if (title.length > MAX_TITLE) throw badRequest(`title is ${title.length} characters; the limit is ${MAX_TITLE}`);
    const description = input.description ?? '';
    if (description.length > MAX_TEXT) throw badRequest(`description is ${description.length} characters; the limit is ${MAX_TEXT}`);
    const id = randomUUID();
    const assignee = input.assignedTo?.trim() || null;
    await this.store.run(
      `INSERT INTO tasks_tasks (id, title, description, status, posted_to, assigned_to, created_by, created_at)
       VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)`,
      [id, title, description, assignee, assignee, input.createdBy?.trim() || null, this.iso()],
    );
    const task = (await this.get(id))!;
    this.announce(task);
    return task;
  }

  async get(id: string): Promise<Task | undefined> {
    const row = await this.store.one<Row>('SELECT * FROM tasks_tasks WHERE id = ?', [id]);
    return row && toTask(row);
  }

  /** Tasks newest first, optionally of one status. */
  async list(filter: { status?: TaskStatus; assignedTo?: string; limit: number; offset: number }): Promise<{ tasks: Task[]; total: number }> {
    await this.sweep();
    const where: string[] = [];
    const params: string[] = [];
    if (filter.status) (where.push('status = ?'), params.push(filter.status));
    if (filter.assignedTo) (where.push('(assigned_to = ? OR posted_to = ?)'), params.push(filter.assignedTo, filter.assignedTo));
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = Number((await this.store.one<{ n: number }>(`SELECT COUNT(*) AS n FROM tasks_tasks ${clause}`, params))!.n);
    const rows = await this.store.many<Row>(`SELECT * FROM tasks_tasks ${clause} ORDER BY seq DESC LIMIT ? OFFSET ?`, [...params, filter.limit, filter.offset]);
    return { tasks: rows.map(toTask), total };
  }

  async counts(): Promise<Record<TaskStatus, number> & { total: number }> {
    await this.sweep();
    const rows = await this.store.many<{ status: TaskStatus; n: number }>('SELECT status, COUNT(*) AS n FROM tasks_tasks GROUP BY status');
    const counts = { total: 0, pending: 0, in_progress: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const r of rows) {
      counts[r.status] = Number(r.n);
      counts.total += Number(r.n);
    }
    return counts;
  }

  /** Tasks that reached completed or failed in the last `ms`. */
  async finishedSince(ms: number): Promise<number> {
    const since = new Date(this.now() - ms).toISOString();
    const row = await this.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM tasks_tasks WHERE status IN ('completed', 'failed') AND completed_at >= ?", [
      since,
    ]);
    return Number(row!.n);
  }

  async claim(agentId: string, taskId?: string): Promise<Task | undefined> {
    await this.sweep();
    const agent = this.deps.agents()?.get(agentId);
    const name = agent?.name ?? agentId;
    const mine = "status = 'pending' AND (posted_to IS NULL OR posted_to = ? OR LOWER(posted_to) = LOWER(?))";
    // Assigned tasks before unassigned ones (a boolean sorts differently per engine: the CASE does not).
    const candidate = taskId
      ? await this.store.one<{ id: string }>(`SELECT id FROM tasks_tasks WHERE id = ? AND ${mine}`, [taskId, agentId, name])
      : await this.store.one<{ id: string }>(`SELECT id FROM tasks_tasks WHERE ${mine} ORDER BY CASE WHEN posted_to IS NULL THEN 1 ELSE 0 END, seq LIMIT 1`, [
          agentId,
          name,
        ]);
    if (!candidate) return undefined;
    const deadline = this.now() + this.deps.config().claim_timeout_secs * 1000;
    const { changes } = await this.store.run(
      "UPDATE tasks_tasks SET status = 'in_progress', assigned_to = ?, claimed_at = ?, claim_deadline = ? WHERE id = ? AND status = 'pending'",
      [agentId, this.iso(), deadline, candidate.id],
    );
    if (!changes) return undefined;
    const task = (await this.get(candidate.id))!;
    this.deps.events.publish('task.claimed', { taskId: task.id, title: task.title, agentId });
    return task;
  }

  async complete(agentId: string, taskId: string, result: string, status: 'completed' | 'failed' = 'completed'): Promise<Task> {
    const task = await this.get(taskId);
    if (!task) throw notFound(`task '${taskId}' not found`);
    if (task.status !== 'in_progress' || task.assigned_to !== agentId) {
      throw conflict(
        `task '${taskId}' is ${task.status}${task.status === 'in_progress' ? ' by another agent' : ''}; only the agent that claimed it can complete it`,
      );
    }
    const done = await this.finish(taskId, status, result.slice(0, MAX_TEXT), agentId, "status = 'in_progress' AND assigned_to = ?", [agentId]);
    if (!done) throw conflict(`task '${taskId}' is no longer in progress`);
    return done;
  }

  /** DELETE /api/tasks/{id}: a pending or claimed task becomes cancelled (it stays listed). */
  async cancel(taskId: string): Promise<Task> {
    const task = await this.get(taskId);
    if (!task) throw notFound(`task '${taskId}' not found`);
    if (task.status !== 'pending' && task.status !== 'in_progress')
      throw conflict(`task '${taskId}' is ${task.status}; only pending or in_progress tasks can be cancelled`);
    const done = await this.finish(taskId, 'cancelled', null, undefined, "status IN ('pending', 'in_progress')", []);
    if (!done) throw conflict(`task '${taskId}' is no longer pending or in progress`);
    return done;
  }

  /** POST /api/tasks/{id}/retry: a failed or cancelled task goes back to pending for its original assignee. */
  async retry(taskId: string): Promise<Task> {
    const task = await this.get(taskId);
    if (!task) throw notFound(`task '${taskId}' not found`);
    const { changes } = await this.store.run(
      `UPDATE tasks_tasks SET status = 'pending', assigned_to = posted_to, claimed_at = NULL, claim_deadline = NULL, completed_at = NULL,
       result = NULL, retry_count = retry_count + 1 WHERE id = ? AND status IN ('failed', 'cancelled')`,
      [taskId],
    );
    if (!changes) throw conflict(`task '${taskId}' is ${task.status}; only failed or cancelled tasks can be retried`);
    const again = (await this.get(taskId))!;
    this.announce(again);
    return again;
  }

  /** Claims past their deadline go back to pending, or fail once max_retries timeouts are used up. */
  async sweep(): Promise<void> {
    const now = this.now();
    const expired = await this.store.many<{ id: string; retry_count: number }>(
      "SELECT id, retry_count FROM tasks_tasks WHERE status = 'in_progress' AND claim_deadline <= ?",
      [now],
    );
    const max = this.deps.config().max_retries;
    for (const t of expired) {
      if (max > 0 && t.retry_count + 1 > max) {
        await this.finish(t.id, 'failed', `claim timed out ${t.retry_count + 1} times`, undefined, "status = 'in_progress' AND claim_deadline <= ?", [now]);
        continue;
      }
      const { changes } = await this.store.run(
        `UPDATE tasks_tasks SET status = 'pending', assigned_to = posted_to, claimed_at = NULL, claim_deadline = NULL, retry_count = retry_count + 1
         WHERE id = ? AND status = 'in_progress' AND claim_deadline <= ?`,
        [t.id, now],
      );
      if (changes) this.announce((await this.get(t.id))!);
    }
  }

  /** Tasks an agent holds go back to pending (the agent was killed). */
  async releaseAgent(agentId: string): Promise<void> {
    const held = await this.store.many<{ id: string }>("SELECT id FROM tasks_tasks WHERE status = 'in_progress' AND assigned_to = ?", [agentId]);
    for (const t of held) {
      const { changes } = await this.store.run(
        "UPDATE tasks_tasks SET status = 'pending', assigned_to = posted_to, claimed_at = NULL, claim_deadline = NULL WHERE id = ? AND status = 'in_progress'",
        [t.id],
      );
      if (changes) this.announce((await this.get(t.id))!);
    }
  }

  /** Moves a task to a final state when `guard` still holds; undefined when it no longer did (someone else moved it). */
  private async finish(
    taskId: string,
    status: TaskStatus,
    result: string | null,
    agentId: string | undefined,
    guard: string,
    params: SqlValue[],
  ): Promise<Task | undefined> {
    const { changes } = await this.store.run(
      `UPDATE tasks_tasks SET status = ?, result = ?, completed_at = ?, claim_deadline = NULL WHERE id = ? AND ${guard}`,
      [status, result, this.iso(), taskId, ...params],
    );
    if (!changes) return undefined;
    const task = (await this.get(taskId))!;
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

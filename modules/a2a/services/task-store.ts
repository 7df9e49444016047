/**
 * The A2A SDK's TaskStore in SQLite: tasks this instance serves survive a
 * restart (GET /a2a/tasks/{id}, tasks/get). Tasks are kept as the SDK's proto
 * JSON; state and agent are columns for listing and retention.
 */
import type { Database } from 'better-sqlite3';
import { prepared } from '@talon/module-sdk';
import type { Task } from '@a2a-js/sdk';
import type { TaskStore } from '@a2a-js/sdk/server';
import { a2aCore } from './sdk.ts';

type ListTasks = TaskStore['list'];

const TERMINAL = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

export class SqliteTaskStore implements TaskStore {
  constructor(private readonly db: Database) {}

  async save(task: Task): Promise<void> {
    const now = new Date().toISOString();
    const agentId = typeof task.metadata?.agent_id === 'string' ? task.metadata.agent_id : null;
    prepared(
      this.db,
      `INSERT INTO a2a_tasks (id, context_id, agent_id, state, task, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET state = excluded.state, task = excluded.task, agent_id = COALESCE(excluded.agent_id, agent_id), updated_at = excluded.updated_at`,
    ).run(
      task.id,
      task.contextId,
      agentId,
      a2aCore().taskStateToJSON(task.status?.state ?? a2aCore().TaskState.TASK_STATE_UNSPECIFIED),
      JSON.stringify(a2aCore().Task.toJSON(task)),
      now,
      now,
    );
  }

  async load(taskId: string): Promise<Task | undefined> {
    const row = prepared<[string], { task: string }>(this.db, 'SELECT task FROM a2a_tasks WHERE id = ?').get(taskId);
    return row ? a2aCore().Task.fromJSON(JSON.parse(row.task)) : undefined;
  }

  async list(params: Parameters<ListTasks>[0]): ReturnType<ListTasks> {
    const pageSize = Math.min(Math.max(params.pageSize ?? 50, 1), 100);
    const offset = Number(params.pageToken) || 0;
    const state = params.status ? a2aCore().taskStateToJSON(params.status) : null;
    const where = 'WHERE (? IS NULL OR context_id = ?) AND (? IS NULL OR state = ?)';
    const args = [params.contextId || null, params.contextId || null, state, state];
    const total = prepared<unknown[], { n: number }>(this.db, `SELECT COUNT(*) AS n FROM a2a_tasks ${where}`).get(...args)!.n;
    const rows = prepared<unknown[], { task: string }>(this.db, `SELECT task FROM a2a_tasks ${where} ORDER BY updated_at DESC LIMIT ? OFFSET ?`).all(
      ...args,
      pageSize,
      offset,
    );
    const next = offset + rows.length < total ? String(offset + rows.length) : '';
    return { tasks: rows.map((r) => a2aCore().Task.fromJSON(JSON.parse(r.task))), nextPageToken: next, pageSize, totalSize: total };
  }

  /** Tasks still marked running when the service starts were cut off by a stop: they end as failed. */
  failInterrupted(): number {
    const rows = prepared<[], { task: string }>(this.db, `SELECT task FROM a2a_tasks WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')`).all();
    for (const row of rows) {
      const task = a2aCore().Task.fromJSON(JSON.parse(row.task));
      task.status = { state: a2aCore().TaskState.TASK_STATE_FAILED, message: undefined, timestamp: new Date().toISOString() };
      void this.save(task);
    }
    return rows.length;
  }

  /** Deletes finished tasks older than the retention, then the oldest finished ones beyond the cap. */
  prune(retentionHours: number, maxTasks: number): void {
    const cutoff = new Date(Date.now() - retentionHours * 3_600_000).toISOString();
    const terminal = TERMINAL.map((s) => `'${s}'`).join(', ');
    prepared(this.db, `DELETE FROM a2a_tasks WHERE state IN (${terminal}) AND updated_at < ?`).run(cutoff);
    prepared(
      this.db,
      `DELETE FROM a2a_tasks WHERE id IN (SELECT id FROM a2a_tasks WHERE state IN (${terminal}) ORDER BY updated_at DESC LIMIT -1 OFFSET ?)`,
    ).run(maxTasks);
  }
}

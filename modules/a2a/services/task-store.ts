/**
 * The A2A SDK's TaskStore on the service's store: tasks this instance serves survive a restart (GET /a2a/tasks/{id},
 * tasks/get). Tasks are kept as the SDK's proto JSON; state and agent are columns for listing and retention, and node
 * is the process that saved the task last (the one running it): when that process dies, its running tasks fail.
 */
import type { Store } from '@talon/module-sdk';
import type { Task } from '@a2a-js/sdk';
import type { TaskStore } from '@a2a-js/sdk/server';
import { a2aCore } from './sdk.ts';

type ListTasks = TaskStore['list'];

const TERMINAL = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];
const RUNNING = `state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')`;

const stateOf = (task: Task) => a2aCore().taskStateToJSON(task.status?.state ?? a2aCore().TaskState.TASK_STATE_UNSPECIFIED);

export class StoreTaskStore implements TaskStore {
  constructor(
    private readonly store: Store,
    /** This process's node id. */
    private readonly node: string,
  ) {}

  async save(task: Task): Promise<void> {
    const now = new Date().toISOString();
    const agentId = typeof task.metadata?.agent_id === 'string' ? task.metadata.agent_id : null;
    await this.store.run(
      `INSERT INTO a2a_tasks (id, context_id, agent_id, state, task, node, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET state = excluded.state, task = excluded.task, agent_id = COALESCE(excluded.agent_id, a2a_tasks.agent_id),
         node = excluded.node, updated_at = excluded.updated_at`,
      [task.id, task.contextId, agentId, stateOf(task), JSON.stringify(a2aCore().Task.toJSON(task)), this.node, now, now],
    );
  }

  async load(taskId: string): Promise<Task | undefined> {
    const row = await this.store.one<{ task: string }>('SELECT task FROM a2a_tasks WHERE id = ?', [taskId]);
    return row ? a2aCore().Task.fromJSON(JSON.parse(row.task)) : undefined;
  }

  async list(params: Parameters<ListTasks>[0]): ReturnType<ListTasks> {
    const pageSize = Math.min(Math.max(params.pageSize ?? 50, 1), 100);
    const offset = Number(params.pageToken) || 0;
    const state = params.status ? a2aCore().taskStateToJSON(params.status) : null;
    const where = 'WHERE (CAST(? AS TEXT) IS NULL OR context_id = ?) AND (CAST(? AS TEXT) IS NULL OR state = ?)';
    const args = [params.contextId || null, params.contextId || null, state, state];
    const total = (await this.store.one<{ n: number }>(`SELECT COUNT(*) AS n FROM a2a_tasks ${where}`, args))!.n;
    const rows = await this.store.many<{ task: string }>(`SELECT task FROM a2a_tasks ${where} ORDER BY updated_at DESC LIMIT ? OFFSET ?`, [
      ...args,
      pageSize,
      offset,
    ]);
    const next = offset + rows.length < total ? String(offset + rows.length) : '';
    return { tasks: rows.map((r) => a2aCore().Task.fromJSON(JSON.parse(r.task))), nextPageToken: next, pageSize, totalSize: total };
  }

  /** The running tasks of a node that died end as failed; of several processes taking over, one does it. */
  takeOver(deadNode: string): Promise<number> {
    return this.failRunning('node = ?', [deadNode]);
  }

  /**
   * At start: running tasks of nodes that are not live (and of none: saved before nodes were recorded) were cut off
   * by a stop nobody handed over; they end as failed. Those of the live processes are theirs.
   */
  sweep(live: readonly string[]): Promise<number> {
    return this.failRunning(`(node IS NULL OR node NOT IN (${live.map(() => '?').join(', ')}))`, live);
  }

  /**
   * One conditional update claims the tasks (so that of two processes one fails each task), then their JSON gets the
   * failed status, in the same transaction.
   */
  private failRunning(which: string, params: readonly string[]): Promise<number> {
    const now = new Date().toISOString();
    return this.store.tx(async (t) => {
      const rows = await t.many<{ id: string; task: string }>(
        `UPDATE a2a_tasks SET state = 'TASK_STATE_FAILED', node = ?, updated_at = ? WHERE ${RUNNING} AND ${which} RETURNING id, task`,
        [this.node, now, ...params],
      );
      for (const row of rows) {
        const task = a2aCore().Task.fromJSON(JSON.parse(row.task));
        task.status = { state: a2aCore().TaskState.TASK_STATE_FAILED, message: undefined, timestamp: now };
        await t.run('UPDATE a2a_tasks SET task = ? WHERE id = ?', [JSON.stringify(a2aCore().Task.toJSON(task)), row.id]);
      }
      return rows.length;
    });
  }

  /** Deletes finished tasks older than the retention, then the oldest finished ones beyond the cap. */
  async prune(retentionHours: number, maxTasks: number): Promise<void> {
    const cutoff = new Date(Date.now() - retentionHours * 3_600_000).toISOString();
    const terminal = TERMINAL.map((s) => `'${s}'`).join(', ');
    // "Every row after the first maxTasks": SQLite says LIMIT -1, PostgreSQL LIMIT ALL.
    const all = this.store.pick({ sqlite: 'LIMIT -1', postgres: 'LIMIT ALL' });
    await this.store.tx(async (t) => {
      await t.run(`DELETE FROM a2a_tasks WHERE state IN (${terminal}) AND updated_at < ?`, [cutoff]);
      await t.run(`DELETE FROM a2a_tasks WHERE id IN (SELECT id FROM a2a_tasks WHERE state IN (${terminal}) ORDER BY updated_at DESC ${all} OFFSET ?)`, [
        maxTasks,
      ]);
    });
  }
}

/**
 * The rows of media_video_tasks. A task is claimed by the process polling it (node + lease_until) with one
 * conditional UPDATE, so of several processes on one database exactly one polls a task at a time; a claim ends when the
 * poll's outcome is written (released with the next poll time) or when its lease runs out (the process died or hung).
 * Every write that ends a task is conditional on the task still processing, so a cancelled task stays cancelled
 * whatever a poll in flight brings back.
 */
import type { Store } from '@talon/module-sdk';
import type { VideoStatus } from '@talon/media';

export interface VideoTaskRow {
  task_id: string;
  provider: string;
  provider_task_id: string;
  model: string;
  prompt: string;
  status: VideoStatus;
  progress: number | null;
  polls: number;
  attempts: number;
  next_poll_at: number;
  deadline_at: number;
  node: string | null;
  lease_until: number | null;
  result_file_id: string | null;
  width: number | null;
  height: number | null;
  duration_secs: number | null;
  error: string | null;
  agent_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface NewVideoTask {
  task_id: string;
  provider: string;
  provider_task_id: string;
  model: string;
  prompt: string;
  next_poll_at: number;
  deadline_at: number;
  agent_id?: string;
  now: number;
}

/** What a poll that did not end the task writes back: the next poll, and the claim released. */
export interface PollOutcome {
  next_poll_at: number;
  polls: number;
  attempts: number;
  progress: number | null;
  error: string | null;
}

export interface TaskResult {
  result_file_id: string;
  model: string;
  width: number | null;
  height: number | null;
  duration_secs: number | null;
}

const COLUMNS =
  'task_id, provider, provider_task_id, model, prompt, status, progress, polls, attempts, next_poll_at, deadline_at, node, lease_until, result_file_id, width, height, duration_secs, error, agent_id, created_at, updated_at';

/** SQLite hands back integers as numbers; PostgreSQL's BIGINT may arrive as text. */
function normalise(row: VideoTaskRow): VideoTaskRow {
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    ...row,
    progress: num(row.progress),
    polls: Number(row.polls),
    attempts: Number(row.attempts),
    next_poll_at: Number(row.next_poll_at),
    deadline_at: Number(row.deadline_at),
    lease_until: num(row.lease_until),
    width: num(row.width),
    height: num(row.height),
    duration_secs: num(row.duration_secs),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

export class VideoTaskStore {
  constructor(private readonly store: Store) {}

  async insert(task: NewVideoTask): Promise<void> {
    await this.store.run(
      `INSERT INTO media_video_tasks (task_id, provider, provider_task_id, model, prompt, status, polls, attempts, next_poll_at, deadline_at, agent_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'processing', 0, 0, ?, ?, ?, ?, ?)`,
      [
        task.task_id,
        task.provider,
        task.provider_task_id,
        task.model,
        task.prompt,
        task.next_poll_at,
        task.deadline_at,
        task.agent_id ?? null,
        task.now,
        task.now,
      ],
    );
  }

  async get(taskId: string): Promise<VideoTaskRow | undefined> {
    const row = await this.store.one<VideoTaskRow>(`SELECT ${COLUMNS} FROM media_video_tasks WHERE task_id = ?`, [taskId]);
    return row && normalise(row);
  }

  /** A page of the tasks, newest first (GET /api/media/video). */
  async list(limit: number, offset: number): Promise<VideoTaskRow[]> {
    const rows = await this.store.many<VideoTaskRow>(`SELECT ${COLUMNS} FROM media_video_tasks ORDER BY created_at DESC, task_id DESC LIMIT ? OFFSET ?`, [
      limit,
      offset,
    ]);
    return rows.map(normalise);
  }

  async count(): Promise<number> {
    const counted = await this.store.one<{ n: number | string }>('SELECT COUNT(*) AS n FROM media_video_tasks', []);
    return Number(counted?.n ?? 0);
  }

  /**
   * Claims up to `limit` tasks that are due (their next poll, or their deadline, has come) and that no process holds:
   * unclaimed, or the holder's lease ran out. Each claim is its own conditional UPDATE, so a task another process
   * claimed between the read and the write is skipped.
   */
  async claimDue(node: string, now: number, leaseMs: number, limit: number): Promise<VideoTaskRow[]> {
    const due = await this.store.many<{ task_id: string }>(
      `SELECT task_id FROM media_video_tasks
       WHERE status = 'processing' AND (next_poll_at <= ? OR deadline_at <= ?) AND (node IS NULL OR lease_until < ?)
       ORDER BY next_poll_at LIMIT ?`,
      [now, now, now, limit],
    );
    const claimed: VideoTaskRow[] = [];
    for (const { task_id } of due) {
      const row = await this.store.one<VideoTaskRow>(
        `UPDATE media_video_tasks SET node = ?, lease_until = ?
         WHERE task_id = ? AND status = 'processing' AND (node IS NULL OR lease_until < ?)
         RETURNING ${COLUMNS}`,
        [node, now + leaseMs, task_id, now],
      );
      if (row) claimed.push(normalise(row));
    }
    return claimed;
  }

  /** Extends the leases of the tasks this node is polling (a slow provider or a large download outlasts one lease). */
  async renew(node: string, leaseUntil: number): Promise<void> {
    await this.store.run("UPDATE media_video_tasks SET lease_until = ? WHERE node = ? AND status = 'processing'", [leaseUntil, node]);
  }

  /** Gives back a node's claims (it died, or it is stopping): another process polls those tasks at once. */
  async releaseNode(node: string): Promise<number> {
    const { changes } = await this.store.run("UPDATE media_video_tasks SET node = NULL, lease_until = NULL WHERE node = ? AND status = 'processing'", [node]);
    return changes;
  }

  /** Writes a poll that did not end the task and releases the claim; false when the claim was lost meanwhile. */
  async settle(taskId: string, node: string, outcome: PollOutcome, now: number): Promise<boolean> {
    const { changes } = await this.store.run(
      `UPDATE media_video_tasks SET next_poll_at = ?, polls = ?, attempts = ?, progress = ?, error = ?, node = NULL, lease_until = NULL, updated_at = ?
       WHERE task_id = ? AND node = ? AND status = 'processing'`,
      [outcome.next_poll_at, outcome.polls, outcome.attempts, outcome.progress, outcome.error, now, taskId, node],
    );
    return changes === 1;
  }

  /** Ends a task this node holds as completed; false when it was cancelled (or taken over) meanwhile. */
  async complete(taskId: string, node: string, result: TaskResult, now: number): Promise<boolean> {
    const { changes } = await this.store.run(
      `UPDATE media_video_tasks SET status = 'completed', result_file_id = ?, model = ?, width = ?, height = ?, duration_secs = ?, progress = 100,
         error = NULL, node = NULL, lease_until = NULL, updated_at = ?
       WHERE task_id = ? AND node = ? AND status = 'processing'`,
      [result.result_file_id, result.model, result.width, result.height, result.duration_secs, now, taskId, node],
    );
    return changes === 1;
  }

  /** Ends a task this node holds as failed; false when it was cancelled (or taken over) meanwhile. */
  async fail(taskId: string, node: string, error: string, now: number): Promise<boolean> {
    const { changes } = await this.store.run(
      `UPDATE media_video_tasks SET status = 'failed', error = ?, node = NULL, lease_until = NULL, updated_at = ?
       WHERE task_id = ? AND node = ? AND status = 'processing'`,
      [error, now, taskId, node],
    );
    return changes === 1;
  }

  /** Cancels a task that is still processing, whoever holds it; undefined when it was not processing. */
  async cancel(taskId: string, now: number): Promise<VideoTaskRow | undefined> {
    const row = await this.store.one<VideoTaskRow>(
      `UPDATE media_video_tasks SET status = 'cancelled', error = 'cancelled on request', node = NULL, lease_until = NULL, updated_at = ?
       WHERE task_id = ? AND status = 'processing'
       RETURNING ${COLUMNS}`,
      [now, taskId],
    );
    return row && normalise(row);
  }
}

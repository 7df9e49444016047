/**
 * Contract of the tasks module: the task board (tasks agents claim work from) and the queue (the lanes that run
 * background agent turns for schedules, triggers, workflows and task wake-ups, with their concurrency caps).
 */
import { defineEvents, payload, serviceRef } from '@talon/module-sdk';
import type { TurnResult } from '@talon/agents';

// ------------------------------------------------------------------ board

export type TaskStatus = 'pending' | 'in_progress' | 'completed' | 'failed' | 'cancelled';

export interface Task {
  id: string;
  title: string;
  description: string;
  status: TaskStatus;
  /** Agent UUID or name the task is for (null: anyone may claim it); the claimer's UUID while claimed. */
  assigned_to: string | null;
  created_by: string | null;
  created_at: string;
  claimed_at: string | null;
  completed_at: string | null;
  result: string | null;
  /** How often the task went back to pending (claim timed out, or retried). */
  retry_count: number;
}

export interface PostTask {
  title: string;
  description?: string;
  assignedTo?: string | null;
  createdBy?: string | null;
}

export interface TaskBoard {
  /** Posts a pending task and publishes task.posted. Rejects with HttpError 400 for an empty title. */
  post(task: PostTask): Promise<Task>;
  get(id: string): Promise<Task | undefined>;
  /**
   * Claims a task for an agent: the given one, or else the oldest pending task assigned to it (UUID or name), or
   * else the oldest unassigned one. Undefined when none is available. Publishes task.claimed.
   */
  claim(agentId: string, taskId?: string): Promise<Task | undefined>;
  /** Completes (or fails) a task the agent claimed. Rejects with HttpError 404/409 naming the problem. Publishes task.completed. */
  complete(agentId: string, taskId: string, result: string, status?: 'completed' | 'failed'): Promise<Task>;
  /** Tasks by state (GET /api/tasks/status). */
  counts(): Promise<Record<TaskStatus, number> & { total: number }>;
}

export const taskBoard = serviceRef<TaskBoard>('tasks.board');

// ------------------------------------------------------------------ queue

export type SessionMode = 'persistent' | 'new';

/** One agent turn run in the background, outside any HTTP request. */
export interface BackgroundTurn {
  /** The lane whose concurrency cap applies: 'schedule', 'trigger', 'workflow', 'task' (others get the default cap). */
  lane: string;
  agentId: string;
  message: string;
  /** TurnRequest.origin: 'schedule', 'trigger', 'workflow', 'task'. */
  origin: string;
  /**
   * 'persistent': the agent's current session; 'new': a fresh session for this turn. Null or undefined: the agent
   * manifest's `session_mode`, else `defaultMode`, else 'persistent'.
   */
  sessionMode?: SessionMode | null;
  defaultMode?: SessionMode;
  /** Stops the turn and rejects with HttpError 504 after this long; 0 or undefined = no limit. */
  timeoutMs?: number;
  /** Aborting cancels the turn: its row is marked cancelled and the turn stops where it runs (this or another process). */
  signal?: AbortSignal;
  /**
   * An idempotency key: while a row with this key is kept (a day after it ended), a turn with the same key queues
   * nothing and waits for that row's outcome instead (a scheduled run taken over from a dead process finds the turn
   * that process had queued, rather than running it twice).
   */
  key?: string;
}

/** A lane's rows, counted over every process on the database. */
export interface LaneStatus {
  lane: string;
  /** Turns running now. */
  active: number;
  /** Turns waiting for a slot. */
  queued: number;
  /** The lane's concurrency cap (this process's configuration). */
  capacity: number;
  /** Turns that ended (done, failed or cancelled) since this process started. */
  completed: number;
}

export interface TaskQueue {
  /**
   * Queues one turn (a row, committed before anything runs), which the first process with a free slot in the lane
   * runs; resolves with its result wherever it ran. Nothing queued is lost when a process dies: its running turns go
   * back to the queue (failed after a few such attempts), and queued ones run even if their caller is gone. Rejects
   * with HttpError: 404 for an unknown agent, 504 on timeout, 409 when the turn was stopped (`signal`) before it
   * answered, 503 when the processes running it kept dying, or the agent's own failure.
   */
  runTurn(turn: BackgroundTurn): Promise<TurnResult>;
  /**
   * Runs a job of this process (a scheduled workflow run, say) in a lane slot: it is a row like a turn and counts
   * towards the lane's cap on every process, but only this module copy holds the function, so only it runs the job;
   * if this process ends first, the row is failed, saying so.
   */
  run<T>(lane: string, job: () => Promise<T>): Promise<T>;
  lanes(): Promise<LaneStatus[]>;
}

export const taskQueue = serviceRef<TaskQueue>('tasks.queue');

export const taskEvents = defineEvents('tasks', {
  'task.posted': payload<{ taskId: string; title: string; assignedTo?: string; createdBy?: string }>(),
  'task.claimed': payload<{ taskId: string; title: string; agentId: string }>(),
  'task.completed': payload<{ taskId: string; title: string; agentId?: string; status: 'completed' | 'failed' | 'cancelled'; result?: string }>(),
});

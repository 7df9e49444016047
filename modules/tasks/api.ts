/**
 * Contract of the tasks module: the task board (tasks agents claim work from) and the queue (the lanes that run
 * background agent turns for schedules, triggers, workflows and task wake-ups, with their concurrency caps).
 */
import { serviceRef } from '@talon/module-sdk';
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
  /** Posts a pending task and publishes task.posted. Throws HttpError 400 for an empty title. */
  post(task: PostTask): Task;
  get(id: string): Task | undefined;
  /**
   * Claims a task for an agent: the given one, or else the oldest pending task assigned to it (UUID or name), or
   * else the oldest unassigned one. Undefined when none is available. Publishes task.claimed.
   */
  claim(agentId: string, taskId?: string): Task | undefined;
  /** Completes (or fails) a task the agent claimed. Throws HttpError 404/409 naming the problem. Publishes task.completed. */
  complete(agentId: string, taskId: string, result: string, status?: 'completed' | 'failed'): Task;
  /** Tasks by state (GET /api/tasks/status). */
  counts(): Record<TaskStatus, number> & { total: number };
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
  /** Aborting stops the turn (cancelled runs, a stopping module). */
  signal?: AbortSignal;
}

export interface LaneStatus {
  lane: string;
  /** Turns running now. */
  active: number;
  /** Turns waiting for a slot. */
  queued: number;
  /** The lane's concurrency cap. */
  capacity: number;
  /** Turns finished since start. */
  completed: number;
}

export interface TaskQueue {
  /**
   * Runs one turn in a lane slot. Rejects with HttpError: 404 for an unknown agent, 504 on timeout, 409 when the
   * turn was stopped before it answered, or the agent's own failure.
   */
  runTurn(turn: BackgroundTurn): Promise<TurnResult>;
  /** Runs any job in a lane slot (a scheduled workflow run, say). */
  run<T>(lane: string, job: () => Promise<T>): Promise<T>;
  lanes(): LaneStatus[];
}

export const taskQueue = serviceRef<TaskQueue>('tasks.queue');

/**
 * Durable video tasks. The media service chooses the provider (and asks mediaHooks.beforeCall) and hands the chosen
 * driver to `submit`, which sends the request and commits the task's row before the caller is answered with our own
 * task_id; from then on the row is the state: the poller (`run`, in the module's run) polls it to its end, `view`
 * reads it, `cancel` ends it. See the module's docs (docs/media.md, "Video tasks").
 */
import { randomUUID } from 'node:crypto';
import { conflict } from '@talon/module-sdk';
import type { MediaCallMeta, MediaDriver, VideoTaskView } from '@talon/media';
import { mediaError } from '../kit/errors.ts';
import type { VideoDeps } from './deps.ts';
import { TaskEnds } from './ends.ts';
import { VideoPoller, pollDelayMs } from './poller.ts';
import { VideoTaskStore, type VideoTaskRow } from './store.ts';

export type { VideoDeps, VideoConfig } from './deps.ts';

export interface VideoSubmitRequest {
  prompt: string;
  model?: string;
  duration_secs?: number;
}

export interface VideoTasks {
  /** Submits to the chosen driver and commits the task; a driver error (MediaError) is the caller's to map. */
  submit(driver: MediaDriver, request: VideoSubmitRequest, meta?: MediaCallMeta): Promise<{ task_id: string; provider: string }>;
  /** The task as GET /api/media/video/{task_id} answers; undefined when unknown. */
  view(taskId: string): Promise<VideoTaskView | undefined>;
  /** Cancels a processing task (a cancelled one is answered as it is); a completed or failed one → HttpError 409. */
  cancel(taskId: string): Promise<VideoTaskView | undefined>;
  /** The poller: the module's run(signal). */
  run(signal: AbortSignal): Promise<void>;
  /** For ctx.nodes.onDead: the dead process's tasks are polled again at once. */
  takeOver(node: string): Promise<void>;
}

export function createVideoTasks(deps: VideoDeps): VideoTasks {
  const tasks = new VideoTaskStore(deps.store);
  const ends = new TaskEnds(deps, tasks);
  const poller = new VideoPoller(deps, tasks, ends);
  return {
    async submit(driver, request, meta = {}) {
      if (!driver.submitVideo || !driver.pollVideo) {
        throw mediaError('not_supported', `the media provider '${driver.name}' does not generate video`, { provider: driver.name });
      }
      const config = deps.config();
      const timeout = AbortSignal.timeout(config.video_timeout_secs * 1000);
      const signal = meta.signal ? AbortSignal.any([meta.signal, timeout]) : timeout;
      const submitted = await driver
        .submitVideo({ prompt: request.prompt, durationSecs: request.duration_secs, model: request.model, signal })
        .catch((err: unknown) => {
          if (timeout.aborted && !meta.signal?.aborted) {
            throw mediaError('outage', `${driver.name} did not accept the video task within ${config.video_timeout_secs} s`, { provider: driver.name });
          }
          throw err;
        });
      const now = Date.now();
      const taskId = randomUUID();
      await tasks.insert({
        task_id: taskId,
        provider: driver.name,
        provider_task_id: submitted.providerTaskId,
        model: submitted.model,
        prompt: request.prompt,
        next_poll_at: now + pollDelayMs(config, 0),
        deadline_at: now + config.video_deadline_mins * 60_000,
        agent_id: meta.agentId,
        now,
      });
      deps.log.info({ task_id: taskId, provider: driver.name, provider_task_id: submitted.providerTaskId }, 'video task submitted');
      deps.events.publish('media.video_task', { task_id: taskId, provider: driver.name, status: 'processing' });
      return { task_id: taskId, provider: driver.name };
    },
    async view(taskId) {
      const row = await tasks.get(taskId);
      return row && toView(row);
    },
    async cancel(taskId) {
      const row = await tasks.get(taskId);
      if (!row) return undefined;
      if (row.status === 'cancelled') return toView(row);
      const cancelled = row.status === 'processing' ? await tasks.cancel(taskId, Date.now()) : undefined;
      if (!cancelled) {
        const now = (await tasks.get(taskId)) ?? row;
        if (now.status === 'cancelled') return toView(now);
        throw conflict(`video task ${taskId} is already ${now.status}; only a processing task can be cancelled`);
      }
      ends.cancelled(cancelled);
      return toView(cancelled);
    },
    run: (signal) => poller.run(signal),
    takeOver: (node) => poller.takeOver(node),
  };
}

/** The shapes: processing {status, task_id, progress?}; completed with result; failed or cancelled with error. */
export function toView(row: VideoTaskRow): VideoTaskView {
  const base = { status: row.status, task_id: row.task_id, provider: row.provider };
  switch (row.status) {
    case 'processing':
      return row.progress === null ? base : { ...base, progress: row.progress };
    case 'completed': {
      const fileId = row.result_file_id ?? '';
      return {
        ...base,
        result: {
          file_url: `/api/uploads/${fileId}`,
          file_id: fileId,
          // Not measurable (no ffprobe and the provider said nothing): 0, never a guess.
          width: row.width ?? 0,
          height: row.height ?? 0,
          duration_secs: row.duration_secs ?? 0,
          provider: row.provider,
          model: row.model,
        },
      };
    }
    default:
      return { ...base, error: row.error ?? row.status };
  }
}

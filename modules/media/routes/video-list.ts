/**
 * GET /api/media/video: the video tasks, newest first, for the dashboard's list (ours, additive to the spec). Each is
 * the task as GET /api/media/video/{task_id} answers it, plus its prompt and when it was submitted.
 */
import type { Routes, Store } from '@talon/module-sdk';
import type { VideoTaskView } from '@talon/media';
import { videoTaskResponse } from '../services/schemas.ts';
import { toView } from '../services/video/index.ts';
import { VideoTaskStore } from '../services/video/store.ts';

const tags = ['media'];

export const videoListQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'tasks to return: 1 to 100, default 20' },
    // Bounded: SQLite refuses an OFFSET past 64 bits as a datatype mismatch (a 500), and no list is that long.
    offset: {
      type: 'integer',
      minimum: 0,
      maximum: 1_000_000_000,
      default: 0,
      description: 'tasks to skip (newest first): 0 to 1000000000',
      'x-error': 'a whole number from 0 to 1000000000',
    },
  },
  // As GET /api/media/video/{task_id}: other parameters (a cache buster) are ignored.
  additionalProperties: true,
} as const;

/** A task as its own route answers it, plus its prompt and when it was submitted. */
const listedTask = {
  ...videoTaskResponse,
  properties: { ...videoTaskResponse.properties, prompt: { type: 'string' }, created_at: { type: 'string', format: 'date-time' } },
  required: [...videoTaskResponse.required, 'prompt', 'created_at'],
} as const;

export type ListedVideoTask = VideoTaskView & { prompt: string; created_at: string };

export function videoListRoutes(app: Routes, store: Store): void {
  const tasks = new VideoTaskStore(store);
  app.get(
    '/api/media/video',
    {
      schema: {
        summary: 'The video tasks, newest first, each with its prompt and when it was submitted',
        tags,
        querystring: videoListQuery,
        response: {
          200: {
            type: 'object',
            properties: { tasks: { type: 'array', items: listedTask }, total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' } },
            required: ['tasks', 'total', 'limit', 'offset'],
          },
        },
      },
      // The dashboard reads it again while a task is processing.
      config: { quiet: true },
    },
    async (request) => {
      const { limit, offset } = request.query;
      // Each row turned into a view as the task route turns it (toView).
      const [rows, total] = await Promise.all([tasks.list(limit, offset), tasks.count()]);
      const listed: ListedVideoTask[] = rows.map((row) => ({ ...toView(row), prompt: row.prompt, created_at: new Date(row.created_at).toISOString() }));
      return { tasks: listed, total, limit, offset };
    },
  );
}

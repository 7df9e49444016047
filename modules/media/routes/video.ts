/**
 * Video tasks over HTTP: POST /api/media/video submits (202 with our own task_id, once the task's row is committed),
 * GET /api/media/video/{task_id} reads the task (the spec's `?provider=` is accepted and checked against the task,
 * and may be left out: the task_id alone names the task), DELETE cancels it (ours, additive).
 */
import { badRequest, isUuid, notFound, type Routes } from '@talon/module-sdk';
import type { MediaService, VideoTaskView } from '@talon/media';
import { videoTaskResponse } from '../services/schemas.ts';

const tags = ['media'];

export const videoBody = {
  type: 'object',
  properties: {
    prompt: {
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      pattern: '\\S',
      description: 'what the video shows',
      'x-error': 'a description of the video: text of 1 to 2000 characters, not blank',
    },
    provider: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'a provider by name (GET /api/media/providers); default: the first configured one with VideoGeneration',
    },
    model: { type: 'string', minLength: 1, maxLength: 200, description: "the provider's video model; default: the provider's" },
    duration_secs: { type: 'integer', minimum: 1, maximum: 60, description: 'length of the video', 'x-error': 'a whole number of seconds from 1 to 60' },
  },
  required: ['prompt'],
  additionalProperties: false,
} as const;

const taskParams = { type: 'object', properties: { task_id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['task_id'] } as const;
const taskQuery = {
  type: 'object',
  properties: { provider: { type: 'string', maxLength: 100, description: "the task's provider (the spec's parameter); checked when given" } },
  additionalProperties: true,
} as const;

export function videoRoutes(app: Routes, service: () => Pick<MediaService, 'submitVideo' | 'video' | 'cancelVideo'>): void {
  app.post(
    '/api/media/video',
    {
      schema: {
        summary: 'Start generating a video: 202 with a task to poll (GET /api/media/video/{task_id}) or cancel',
        tags,
        body: videoBody,
        response: { 202: { type: 'object', properties: { task_id: { type: 'string' }, provider: { type: 'string' } }, required: ['task_id', 'provider'] } },
      },
      config: { rateCost: 30 },
    },
    async (request, reply) => {
      const submitted = await service().submitVideo(request.body);
      return reply.code(202).send(submitted);
    },
  );

  app.get(
    '/api/media/video/:task_id',
    {
      schema: {
        summary: 'A video task: processing (progress), completed (the file), failed or cancelled (error)',
        tags,
        params: taskParams,
        querystring: taskQuery,
        response: { 200: videoTaskResponse },
      },
      // The dashboard and clients poll it.
      config: { quiet: true },
    },
    async (request) => {
      const view = await known(request.params.task_id, (id) => service().video(id));
      const asked = request.query.provider;
      if (asked !== undefined && asked !== '' && asked !== view.provider) {
        throw badRequest(`provider '${asked}' is not the provider of video task ${view.task_id} (it is '${view.provider}')`);
      }
      return view;
    },
  );

  app.delete(
    '/api/media/video/:task_id',
    {
      schema: {
        summary: 'Cancel a video task (and at its provider where it can); 409 once it completed or failed',
        tags,
        params: taskParams,
        response: { 200: videoTaskResponse },
      },
    },
    async (request) => known(request.params.task_id, (id) => service().cancelVideo(id)),
  );
}

/** Task ids are our UUIDs: anything else, or one no task has, is an unknown task (404). */
async function known(taskId: string, read: (id: string) => Promise<VideoTaskView | undefined>): Promise<VideoTaskView> {
  const view = isUuid(taskId) ? await read(taskId.toLowerCase()) : undefined;
  if (!view) throw notFound(`no video task '${taskId}'`);
  return view;
}

/**
 * The spec's media rows: POST /api/media/image, /speech and /music (JSON bodies, one schema each), GET
 * /api/media/providers. Video is routes/video.ts, transcription routes/transcribe.ts. The handlers pass the request's
 * abort on: a client that goes away stops the provider call.
 */
import type { FastifyReply, Routes } from '@talon/module-sdk';
import type { MediaService } from '@talon/media';
import { audioResponse, imageBody, imageResponse, musicBody, providersResponse, speechBody } from '../services/schemas.ts';

const tags = ['media'];

/** Aborted when the client goes away before the answer (the response closes unfinished). */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

export function mediaRoutes(app: Routes, service: () => MediaService): void {
  app.post(
    '/api/media/image',
    {
      schema: { summary: 'Generate images; each is a file served at /api/uploads/{file_id}', tags, body: imageBody, response: { 200: imageResponse } },
      config: { rateCost: 30 },
    },
    async (request, reply) => service().image(request.body, { signal: clientGone(reply) }),
  );
  app.post(
    '/api/media/speech',
    {
      schema: {
        summary: 'Speak a text; the audio is a file served at /api/uploads/{file_id}, measured',
        tags,
        body: speechBody,
        response: { 200: audioResponse },
      },
      config: { rateCost: 30 },
    },
    async (request, reply) => service().speech(request.body, { signal: clientGone(reply) }),
  );
  app.post(
    '/api/media/music',
    {
      schema: {
        summary: 'Generate music from a prompt or lyrics; a file served at /api/uploads/{file_id}',
        tags,
        body: musicBody,
        response: { 200: audioResponse },
      },
      config: { rateCost: 30 },
    },
    async (request, reply) => service().music(request.body, { signal: clientGone(reply) }),
  );
  app.get(
    '/api/media/providers',
    {
      schema: {
        summary: 'Media providers: whether each is configured, its capabilities and what to set or install',
        tags,
        response: { 200: providersResponse },
      },
    },
    async () => ({ providers: service().providers() }),
  );
}

/** POST /api/agents/{id}/upload (multipart, one file) and GET /api/uploads/{file_id}. */
import multipart from '@fastify/multipart';
import { HttpError, badRequest, notFound, payloadTooLarge, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentServices } from '../services/context.ts';
import { agentParam, idParams } from './common.ts';
import { serveUpload } from './serve-upload.ts';

export function uploadRoutes(app: Routes, s: AgentServices): void {
  app.register(multipart, { throwFileSizeLimit: true });

  app.post(
    '/api/agents/:id/upload',
    { schema: { summary: 'Upload a file (multipart/form-data, one file part) for use as an attachment', params: idParams } },
    async (request, reply) => {
      const agent = agentParam(s, request.params.id);
      if (!request.isMultipart()) throw badRequest('send the file as multipart/form-data');
      const limit = s.ctx.config.upload_max_bytes;
      let file;
      let data: Buffer;
      try {
        file = await request.file({ limits: { fileSize: limit, files: 1 } });
        if (!file) throw badRequest('the form has no file part');
        data = await file.toBuffer();
      } catch (err) {
        if (err instanceof HttpError) throw err;
        const e = err as { statusCode?: number; code?: string; message?: string };
        if (e.statusCode === 413 || e.code === 'FST_REQ_FILE_TOO_LARGE') throw payloadTooLarge(`file is larger than the upload limit of ${limit} bytes`);
        throw badRequest(`invalid multipart body: ${e.message ?? String(err)}`);
      }
      const row = await s.uploads.save(agent.id, file.filename, file.mimetype, data);
      return reply.code(201).send({ file_id: row.id, agent_id: agent.id, filename: row.filename, content_type: row.content_type, size: row.size });
    },
  );

  app.get(
    '/api/uploads/:file_id',
    {
      schema: {
        summary: 'A stored file (an upload or a generated media result), streamed, with Range, ETag and a safe Content-Disposition',
        params: { type: 'object', properties: { file_id: { type: 'string' } }, required: ['file_id'] },
      },
    },
    async (request, reply) => {
      const row = await s.uploads.get(requireUuid(request.params.file_id, 'file id'));
      if (!row || !(await serveUpload(row, s.uploads.fileOf(row), request, reply))) throw notFound(`upload '${request.params.file_id}' not found`);
      return reply;
    },
  );
}

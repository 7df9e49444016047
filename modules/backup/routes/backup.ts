import { createReadStream } from 'node:fs';
import type { Routes } from '@talon/module-sdk';
import { COMPONENTS } from '../services/components.ts';
import type { Backups } from '../services/service.ts';

const components = {
  type: 'array',
  items: { type: 'string', enum: COMPONENTS },
  minItems: 1,
  uniqueItems: true,
  description: `parts to include (default all): ${COMPONENTS.join(', ')}`,
} as const;

const backupBody = { type: 'object', properties: { components }, additionalProperties: false } as const;
const restoreBody = {
  type: 'object',
  properties: { filename: { type: 'string', minLength: 1, maxLength: 200 }, components },
  required: ['filename'],
  additionalProperties: false,
} as const;
const fileParams = { type: 'object', properties: { filename: { type: 'string' } }, required: ['filename'] } as const;

export function backupRoutes(app: Routes, backups: Backups): void {
  const tags = ['backup'];
  app.post(
    '/api/backup',
    { schema: { summary: 'Creates a backup archive under $TALON_HOME/backups', tags, body: backupBody }, config: { rateCost: 50 } },
    async (request, reply) => {
      const made = await backups.create(request.body.components);
      request.log.info({ filename: made.filename, size: made.size_bytes }, 'backup created');
      return reply.code(201).send(made);
    },
  );
  app.get('/api/backups', { schema: { summary: 'Lists backup archives, newest first', tags } }, async () => backups.list());
  app.get(
    '/api/backups/:filename',
    { schema: { summary: 'Downloads a backup archive (administrators only, like the list)', tags, params: fileParams } },
    async (request, reply) => {
      const file = backups.archivePath(request.params.filename);
      return reply.type('application/gzip').header('content-disposition', `attachment; filename="${request.params.filename}"`).send(createReadStream(file));
    },
  );
  app.delete('/api/backups/:filename', { schema: { summary: 'Deletes a backup archive', tags, params: fileParams } }, async (request, reply) => {
    await backups.remove(request.params.filename);
    return reply.code(204).send();
  });
  app.post(
    '/api/restore',
    {
      schema: { summary: 'Restores a backup in place (validated first; modules restarted; no manual restart)', tags, body: restoreBody },
      config: { rateCost: 100 },
    },
    async (request) => {
      const result = await backups.restore(request.body.filename, request.body.components);
      request.log.warn({ filename: result.filename, components: result.components, restarted: result.modules_restarted }, 'backup restored');
      return result;
    },
  );
}

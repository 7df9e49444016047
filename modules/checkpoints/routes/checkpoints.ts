import path from 'node:path';
import { badRequest, readPage, pageQueryProperties, type Routes } from '@talon/module-sdk';
import type { CheckpointManager } from '../services/manager.ts';
import { canonicalDir } from '../services/shadow.ts';

const workingDir = { type: 'string', minLength: 1, description: 'absolute path of the working directory' } as const;

const restoreSchema = {
  summary: 'Restores the files of a checkpoint into its working directory',
  body: {
    type: 'object',
    properties: {
      working_dir: workingDir,
      // Hex only: a value starting with '-' could otherwise reach git as an option.
      commit: { type: 'string', pattern: '^[0-9a-fA-F]{4,40}$', description: 'full or abbreviated commit id (4 to 40 hex characters)' },
    },
    required: ['working_dir', 'commit'],
  },
} as const;

const listSchema = {
  summary: 'Lists the checkpoints of a working directory, newest first',
  querystring: {
    type: 'object',
    properties: { working_dir: workingDir, ...pageQueryProperties },
    required: ['working_dir'],
  },
} as const;

/** The working directory a client names: absolute, canonical. */
function clientWorkDir(value: string): string {
  if (value.includes('\0')) throw badRequest('working_dir must not contain NUL bytes');
  if (!path.isAbsolute(value)) throw badRequest(`working_dir '${value}' must be an absolute path`);
  return canonicalDir(value);
}

export function checkpointRoutes(app: Routes, manager: CheckpointManager): void {
  app.post('/api/checkpoints/restore', { schema: restoreSchema }, async (request) => {
    const { working_dir, commit } = request.body;
    const result = await manager.restore(clientWorkDir(working_dir), commit);
    request.log.info(
      { workDir: result.working_dir, commit: result.commit, files: result.restored.length, safety: result.safety_snapshot },
      'checkpoint restored',
    );
    return result;
  });

  app.get('/api/checkpoints', { schema: listSchema }, async (request) => {
    const page = readPage(request.query, { limit: 50, max: 500 });
    return manager.list(clientWorkDir(request.query.working_dir), page);
  });
}

import path from 'node:path';
import { badRequest, notFound, readPage, pageQueryProperties, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { CheckpointManager } from '../services/manager.ts';
import { canonicalDir } from '../services/shadow.ts';

const workingDir = { type: 'string', minLength: 1, description: 'absolute path of the working directory' } as const;
const agentId = { type: 'string', minLength: 1, description: "an agent's id: its workspace is the working directory" } as const;
// Hex only: a value starting with '-' could otherwise reach git as an option.
const commitId = { type: 'string', pattern: '^[0-9a-fA-F]{4,40}$', description: 'full or abbreviated commit id (4 to 40 hex characters)' } as const;
/** Where a read looks: a working directory, or an agent's workspace (additive, for the dashboard's per-agent view). */
const whereQuery = { working_dir: workingDir, agent_id: agentId } as const;

const restoreSchema = {
  summary: 'Restores the files of a checkpoint into its working directory',
  body: {
    type: 'object',
    properties: {
      working_dir: workingDir,
      commit: commitId,
    },
    required: ['working_dir', 'commit'],
  },
} as const;

const listSchema = {
  summary: 'Lists the checkpoints of a working directory, newest first',
  querystring: {
    type: 'object',
    properties: { ...whereQuery, ...pageQueryProperties },
  },
} as const;

const detailSchema = {
  summary: 'One checkpoint: what changed since the one before (files and unified diff) and the files a restore writes back',
  params: { type: 'object', properties: { commit: commitId }, required: ['commit'] },
  querystring: { type: 'object', properties: whereQuery },
} as const;

/** The working directory a client names: absolute, canonical. */
function clientWorkDir(value: string): string {
  if (value.includes('\0')) throw badRequest('working_dir must not contain NUL bytes');
  if (!path.isAbsolute(value)) throw badRequest(`working_dir '${value}' must be an absolute path`);
  return canonicalDir(value);
}

/** The workspace of an agent; the agents module is an optional dependency. */
function agentWorkDir(agents: AgentRegistry | undefined, id: string): string {
  if (!agents) throw badRequest('agent_id needs the agents module, which is not running: give working_dir');
  const agent = agents.get(requireUuid(id, 'agent_id'));
  if (!agent) throw notFound(`agent '${id}' not found`);
  return canonicalDir(agent.workspace);
}

export function checkpointRoutes(app: Routes, manager: CheckpointManager, agents: () => AgentRegistry | undefined): void {
  /** The working directory a read names: one of working_dir and agent_id. */
  const where = (query: { working_dir?: string; agent_id?: string }) => {
    if ((query.working_dir === undefined) === (query.agent_id === undefined)) throw badRequest('give either working_dir or agent_id');
    return query.agent_id !== undefined ? agentWorkDir(agents(), query.agent_id) : clientWorkDir(query.working_dir!);
  };

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
    const workDir = where(request.query);
    // An agent that has written no file yet has no repository: none of its checkpoints, not an unknown directory.
    if (request.query.agent_id !== undefined && !manager.hasRepository(workDir)) return [];
    return manager.list(workDir, page);
  });

  app.get('/api/checkpoints/:commit', { schema: detailSchema }, async (request) => manager.detail(where(request.query), request.params.commit));
}

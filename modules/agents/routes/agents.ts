/** Agent lifecycle and settings: spawn, list, detail, kill, update, mode, identity, config, clone, model, tools, skills, MCP servers. */
import { badRequest, conflict, pageQueryProperties, readPage, type Routes } from '@talon/module-sdk';
import type { AgentRecord } from '@talon/agents';
import type { AgentServices } from '../services/context.ts';
import { currentManifest } from '../services/manifest-view.ts';
import { agentParam, idParams, stringList } from './common.ts';

const spawnBody = {
  type: 'object',
  properties: {
    manifest_toml: { type: 'string', description: 'the agent.toml text' },
    signed_manifest: { type: 'string', description: 'a signed envelope (JSON) of the same manifest, checked against the trusted signers' },
  },
  required: ['manifest_toml'],
} as const;

const validateBody = {
  type: 'object',
  properties: {
    manifest_toml: { type: 'string', description: 'the agent.toml text' },
    agent_id: { type: 'string', description: 'the agent whose manifest this would replace (its own name is not a clash)' },
  },
  required: ['manifest_toml'],
  additionalProperties: false,
} as const;

const patchBody = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 128 },
    description: { type: 'string' },
    system_prompt: { type: 'string' },
    tags: stringList,
    mcp_servers: stringList,
    manifest_toml: { type: 'string', description: 'replaces the manifest (identity, config and sessions stay)' },
  },
  additionalProperties: false,
} as const;

const updateBody = {
  type: 'object',
  properties: { description: { type: 'string' }, system_prompt: { type: 'string' }, tags: stringList },
  additionalProperties: false,
} as const;

const identityBody = {
  type: 'object',
  properties: { name: { type: 'string' }, avatar: { type: 'string' }, persona: { type: 'string' } },
  additionalProperties: false,
} as const;

export function agentRoutes(app: Routes, s: AgentServices): void {
  app.get(
    '/api/agents',
    {
      schema: {
        summary: 'List agents (bare array of summaries)',
        querystring: {
          type: 'object',
          properties: { ...pageQueryProperties, q: { type: 'string', description: 'text search over name, description and tags' } },
        },
      },
    },
    async (request, reply) => {
      const { q } = request.query;
      const needle = q?.trim().toLowerCase();
      const all = s.registry.all();
      const found = needle ? all.filter((a) => [a.name, a.description, ...a.tags].some((t) => t.toLowerCase().includes(needle))) : all;
      // Every agent unless the client pages (the spec's reply is the whole list).
      const page = readPage(request.query, { limit: Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
      const agents = page.offset === 0 && page.limit >= found.length ? found : found.slice(page.offset, page.offset + page.limit);
      const list = s.views.summaryListBody(agents);
      reply.header('etag', list.etag);
      if (etagMatches(request.headers['if-none-match'], list.etag)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(list.body);
    },
  );

  // Dear: a spawn builds an agent and its workspace.
  app.post('/api/agents', { schema: { summary: 'Spawn an agent from a TOML manifest', body: spawnBody }, config: { rateCost: 50 } }, async (request, reply) => {
    const { manifest_toml, signed_manifest } = request.body;
    const agent = await s.registry.spawn({ manifestToml: manifest_toml, ...(signed_manifest !== undefined && { signedManifest: signed_manifest }) });
    request.log.info({ agent_id: agent.id, name: agent.name }, 'agent spawned');
    return reply.code(201).send({ agent_id: agent.id, name: agent.name });
  });

  // The builder asks as the user types: every problem with its field, nothing spawned or changed.
  app.post(
    '/api/agents/validate',
    { schema: { summary: 'Check a manifest without spawning: its problems, each with the field it is about', body: validateBody } },
    async (request) => {
      const { manifest_toml, agent_id } = request.body;
      const problems = s.registry.problems(manifest_toml, agent_id);
      return { valid: problems.length === 0, problems };
    },
  );

  app.get('/api/agents/:id/manifest', { schema: { summary: 'The manifest as it stands (TOML), for an editor', params: idParams } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    return { agent_id: agent.id, manifest_toml: currentManifest(agent, s.registry.manifestToml(agent.id) ?? '') };
  });

  app.get('/api/agents/:id', { schema: { summary: 'Agent detail', params: idParams } }, async (request) => s.views.detail(agentParam(s, request.params.id)));

  app.delete('/api/agents/:id', { schema: { summary: 'Kill an agent', params: idParams } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    await kill(s, agent);
    return { status: 'killed', agent_id: agent.id };
  });

  app.patch('/api/agents/:id', { schema: { summary: 'Change some fields of an agent', params: idParams, body: patchBody } }, async (request) => {
    const agent = agentParam(s, request.params.id);
    const body = request.body;
    let next = body.manifest_toml !== undefined ? await s.registry.replaceManifest(agent.id, body.manifest_toml) : agent;
    next = await s.registry.update(agent.id, {
      ...(body.name !== undefined && { name: body.name.trim() }),
      ...(body.description !== undefined && { description: body.description }),
      ...(body.system_prompt !== undefined && { systemPrompt: body.system_prompt }),
      ...(body.tags !== undefined && { tags: body.tags }),
      ...(body.mcp_servers !== undefined && { mcpServers: body.mcp_servers }),
    });
    return s.views.detail(next);
  });

  app.put(
    '/api/agents/:id/update',
    { schema: { summary: 'Update description, system prompt or tags', params: idParams, body: updateBody } },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const { description, system_prompt, tags } = request.body;
      await s.registry.update(agent.id, {
        ...(description !== undefined && { description }),
        ...(system_prompt !== undefined && { systemPrompt: system_prompt }),
        ...(tags !== undefined && { tags }),
      });
      return { status: 'updated', agent_id: agent.id };
    },
  );

  app.put(
    '/api/agents/:id/mode',
    {
      schema: {
        summary: 'Stable pins the model and freezes the skills; Normal restores',
        params: idParams,
        body: { type: 'object', properties: { mode: { type: 'string' } }, required: ['mode'] },
      },
    },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const mode = request.body.mode;
      if (mode !== 'Stable' && mode !== 'Normal') throw badRequest(`invalid mode '${mode}': expected 'Stable' or 'Normal'`);
      await s.registry.setMode(agent.id, mode);
      return { status: 'updated', mode, agent_id: agent.id };
    },
  );

  app.patch(
    '/api/agents/:id/identity',
    { schema: { summary: 'Set name, avatar or persona of the identity', params: idParams, body: identityBody } },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const next = await s.registry.update(agent.id, { identity: { ...agent.identity, ...request.body } });
      return { status: 'updated', agent_id: agent.id, identity: next.identity };
    },
  );

  app.patch(
    '/api/agents/:id/config',
    {
      schema: {
        summary: 'Merge into the free-form configuration (null removes a key)',
        params: idParams,
        body: { type: 'object', additionalProperties: true },
      },
    },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const config: Record<string, unknown> = { ...agent.config };
      for (const [key, value] of Object.entries(request.body as Record<string, unknown>)) {
        if (value === null) delete config[key];
        else config[key] = value;
      }
      await s.registry.update(agent.id, { config });
      return { status: 'updated', agent_id: agent.id, config };
    },
  );

  app.post('/api/agents/:id/clone', { schema: { summary: 'Clone an agent (new id, fresh session)', params: idParams } }, async (request, reply) => {
    const copy = await s.registry.clone(agentParam(s, request.params.id).id);
    return reply.code(201).send({ agent_id: copy.id, name: copy.name, session_id: copy.sessionId });
  });

  app.put(
    '/api/agents/:id/model',
    {
      schema: {
        summary: 'Switch the model (id or alias)',
        params: idParams,
        body: { type: 'object', properties: { model: { type: 'string', minLength: 1 } }, required: ['model'] },
      },
    },
    async (request) => {
      const agent = agentParam(s, request.params.id);
      const next = await s.registry.setModel(agent.id, request.body.model);
      return { status: 'updated', model: next.model.model, provider: next.model.provider };
    },
  );

  listRoute(
    app,
    s,
    'tools',
    (a) => a.tools,
    (a, tools) => s.registry.update(a.id, { tools }),
  );
  listRoute(
    app,
    s,
    'skills',
    (a) => a.skills,
    (a, skills) => {
      if (a.mode === 'Stable') throw conflict(`agent '${a.name}' is in Stable mode: its skill list is frozen`);
      return s.registry.update(a.id, { skills });
    },
  );
  listRoute(
    app,
    s,
    'mcp_servers',
    (a) => a.mcpServers,
    (a, mcpServers) => s.registry.update(a.id, { mcpServers }),
  );
}

/** GET and PUT of one of the agent's name lists; PUT replaces it. */
function listRoute(
  app: Routes,
  s: AgentServices,
  key: 'tools' | 'skills' | 'mcp_servers',
  read: (a: AgentRecord) => string[],
  write: (a: AgentRecord, list: string[]) => Promise<AgentRecord>,
): void {
  const view = (a: AgentRecord) => ({ agent_id: a.id, [key]: read(a), ...(key === 'skills' && { frozen: a.mode === 'Stable' }) });
  app.get(`/api/agents/:id/${key}`, { schema: { summary: `The agent's ${key}`, params: idParams } }, async (request) =>
    view(agentParam(s, (request.params as { id: string }).id)),
  );
  app.put(
    `/api/agents/:id/${key}`,
    { schema: { summary: `Replace the agent's ${key}`, params: idParams, body: { type: 'object', properties: { [key]: stringList }, required: [key] } } },
    async (request) => {
      const agent = agentParam(s, (request.params as { id: string }).id);
      const list = (request.body as Record<string, string[]>)[key];
      return view(await write(agent, [...new Set(list.map((x) => x.trim()).filter(Boolean))]));
    },
  );
}

/** Stops the agent's turns and removes it. */
export async function kill(s: AgentServices, agent: AgentRecord): Promise<void> {
  s.runner.stop(agent.id);
  await s.registry.kill(agent.id);
}

/** If-None-Match names this entity tag (or `*`); weak forms count, as RFC 9110 has GET compare them. */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

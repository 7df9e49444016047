/**
 * The spec's 12 endpoints, under /api (Versioning 3) and also at the table's literal paths. While
 * [prompt_intelligence] is off every route answers 404 saying how to turn it on.
 */
import { notFound, requireUuid, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { Versions } from '../services/versions.ts';
import type { Experiments } from '../services/experiments.ts';

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
const names = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, maxItems: 200 } as const;

const versionBody = {
  type: 'object',
  properties: {
    system_prompt: { type: 'string', minLength: 1, maxLength: 100_000 },
    description: { type: 'string', maxLength: 2000 },
    tools: names,
    variables: names,
    activate: { type: 'boolean', description: 'make it the active version at once' },
  },
  required: ['system_prompt'],
  additionalProperties: true,
} as const;

const activateBody = { type: 'object', properties: { agent_id: { type: 'string' } } } as const;

const experimentBody = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    variants: {
      type: 'array',
      minItems: 2,
      maxItems: 10,
      items: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          prompt_version_id: { type: 'string' },
          description: { type: 'string', maxLength: 2000 },
        },
        required: ['name', 'prompt_version_id'],
      },
    },
    traffic_split: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 100 }, minItems: 2, maxItems: 10 },
    success_criteria: { type: 'object' },
  },
  required: ['name', 'variants'],
} as const;

const completeBody = { type: 'object', properties: { winner_variant_id: { type: 'string' } } } as const;

export interface PromptDeps {
  enabled: () => boolean;
  agents: () => AgentRegistry | undefined;
  versions: Versions;
  experiments: Experiments;
}

export function promptRoutes(app: Routes, d: PromptDeps): void {
  // After the agent guard and validation (preHandler): an unknown agent is a 404 naming it, enabled or not.
  app.addHook('preHandler', async () => {
    if (!d.enabled()) throw notFound('prompt versioning and experiments are off: set enabled = true in the [prompt_intelligence] section of config.toml');
  });
  const agentOf = (id: string): string => {
    const agentId = requireUuid(id, 'agent id');
    const registry = d.agents();
    if (registry && !registry.get(agentId)) throw notFound(`Agent '${id}' not found`);
    return agentId;
  };
  const tags = ['prompts'];
  for (const base of ['/api', '']) {
    const hide = base === '';
    const s = <T extends object>(summary: string, more: T) => ({ summary, tags, ...(hide ? { hide } : {}), ...more });

    app.get(`${base}/agents/:id/prompts/versions`, { schema: s('Prompt versions of an agent, newest first', { params: idParams }) }, async (request) => {
      const items = await d.versions.list(agentOf(request.params.id));
      return { items, total: items.length };
    });
    app.post(
      `${base}/agents/:id/prompts/versions`,
      { schema: s('Saves a prompt version', { params: idParams, body: versionBody }) },
      async (request, reply) => {
        const b = request.body;
        const saved = await d.versions.save(agentOf(request.params.id), {
          system_prompt: b.system_prompt,
          description: b.description,
          tools: b.tools,
          variables: b.variables,
        });
        return reply.code(201).send(b.activate ? await d.versions.activate(saved.id) : saved);
      },
    );
    app.get(`${base}/prompts/versions/:id`, { schema: s('A prompt version', { params: idParams }) }, async (request) => d.versions.get(request.params.id));
    app.delete(`${base}/prompts/versions/:id`, { schema: s('Deletes a prompt version', { params: idParams }) }, async (request, reply) => {
      await d.versions.remove(request.params.id);
      return reply.code(204).send();
    });
    app.post(
      `${base}/prompts/versions/:id/activate`,
      { schema: s("Makes the version the agent's system prompt", { params: idParams, body: activateBody }) },
      async (request) => {
        const version = await d.versions.get(request.params.id);
        const given = request.body.agent_id;
        if (given !== undefined && requireUuid(given, 'agent_id') !== version.agent_id)
          throw notFound(`prompt version '${version.id}' does not belong to agent '${given}'`);
        return d.versions.activate(version.id);
      },
    );

    app.get(`${base}/agents/:id/prompts/experiments`, { schema: s('A/B experiments of an agent', { params: idParams }) }, async (request) => {
      const items = await d.experiments.list(agentOf(request.params.id));
      return { items, total: items.length };
    });
    app.post(
      `${base}/agents/:id/prompts/experiments`,
      { schema: s('Creates an A/B experiment (draft)', { params: idParams, body: experimentBody }) },
      async (request, reply) => reply.code(201).send(await d.experiments.create(agentOf(request.params.id), request.body)),
    );
    app.get(`${base}/prompts/experiments/:id`, { schema: s('An experiment with its arms', { params: idParams }) }, async (request) =>
      d.experiments.get(request.params.id),
    );
    app.post(`${base}/prompts/experiments/:id/start`, { schema: s('Starts sampling', { params: idParams }) }, async (request) =>
      d.experiments.start(request.params.id),
    );
    app.post(`${base}/prompts/experiments/:id/pause`, { schema: s('Pauses sampling', { params: idParams }) }, async (request) =>
      d.experiments.pause(request.params.id),
    );
    app.post(
      `${base}/prompts/experiments/:id/complete`,
      { schema: s('Completes it, records and activates the winner', { params: idParams, body: completeBody }) },
      async (request) => d.experiments.complete(request.params.id, request.body.winner_variant_id),
    );
    app.get(`${base}/prompts/experiments/:id/metrics`, { schema: s('Per-arm impressions, wins, cost and latency', { params: idParams }) }, async (request) =>
      d.experiments.metrics(request.params.id),
    );
  }
}

/**
 * Bulk operations. Bodies (the spec leaves them open):
 *   POST   /api/agents/bulk        {manifests: [toml | {manifest_toml}]}  → per-item results
 *   DELETE /api/agents/bulk        {ids: [uuid]}                          → per-item results
 *   POST   /api/agents/bulk/start  {ids?: [uuid]} (all agents when absent) → states Running
 *   POST   /api/agents/bulk/stop   {ids?: [uuid]} (all agents when absent) → states Stopped
 */
import { HttpError, isUuid, type Routes } from '@talon/module-sdk';
import type { AgentState } from '@talon/agents';
import type { AgentServices } from '../services/context.ts';
import { kill } from './agents.ts';

const MAX_BULK = 100;

const createBody = {
  type: 'object',
  properties: {
    manifests: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BULK,
      items: { anyOf: [{ type: 'string' }, { type: 'object', properties: { manifest_toml: { type: 'string' } }, required: ['manifest_toml'] }] },
    },
  },
  required: ['manifests'],
} as const;

const idsBody = (required: boolean) =>
  ({
    type: 'object',
    properties: { ids: { type: 'array', items: { type: 'string' }, maxItems: MAX_BULK * 10 } },
    ...(required ? { required: ['ids'] } : {}),
  }) as const;

type ItemResult = { agent_id?: string; index?: number; status: string; name?: string; state?: AgentState; error?: string };

export function bulkRoutes(app: Routes, s: AgentServices): void {
  app.post('/api/agents/bulk', { schema: { summary: 'Spawn several agents', body: createBody } }, async (request) => {
    const results: ItemResult[] = request.body.manifests.map((item, index) => {
      const toml = typeof item === 'string' ? item : item.manifest_toml;
      try {
        const agent = s.registry.spawn({ manifestToml: toml });
        return { index, status: 'created', agent_id: agent.id, name: agent.name };
      } catch (err) {
        return { index, status: 'error', error: err instanceof HttpError ? err.message : String(err) };
      }
    });
    return summarise(results, 'created');
  });

  app.delete('/api/agents/bulk', { schema: { summary: 'Kill several agents', body: idsBody(true) } }, async (request) => {
    const results = (request.body.ids ?? []).map((id): ItemResult => {
      if (!isUuid(id)) return { agent_id: id, status: 'error', error: `'${id}' is not a UUID` };
      const agent = s.registry.get(id);
      if (!agent) return { agent_id: id, status: 'not_found', error: `agent '${id}' not found` };
      kill(s, agent);
      return { agent_id: id, status: 'killed' };
    });
    return summarise(results, 'killed');
  });

  for (const [action, state] of [
    ['start', 'Running'],
    ['stop', 'Stopped'],
  ] as const) {
    app.post(
      `/api/agents/bulk/${action}`,
      { schema: { summary: `${action === 'start' ? 'Start' : 'Stop'} agents (all when ids is absent)`, body: idsBody(false) } },
      async (request) => {
        const ids = (request.body as { ids?: string[] }).ids ?? s.registry.list().map((a) => a.id);
        const results = ids.map((id): ItemResult => {
          if (!isUuid(id)) return { agent_id: id, status: 'error', error: `'${id}' is not a UUID` };
          const agent = s.registry.get(id);
          if (!agent) return { agent_id: id, status: 'not_found', error: `agent '${id}' not found` };
          if (state === 'Stopped') s.runner.stop(id);
          return { agent_id: id, status: 'ok', state: s.registry.setState(id, state).state };
        });
        return summarise(results, 'ok');
      },
    );
  }
}

function summarise(results: ItemResult[], success: string) {
  const ok = results.filter((r) => r.status === success).length;
  return { results, succeeded: ok, failed: results.length - ok, total: results.length };
}

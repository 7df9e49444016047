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
    // One after another: a later manifest may clash by name with an earlier one of the same request.
    const results: ItemResult[] = [];
    for (const [index, item] of request.body.manifests.entries()) {
      const toml = typeof item === 'string' ? item : item.manifest_toml;
      try {
        const agent = await s.registry.spawn({ manifestToml: toml });
        results.push({ index, status: 'created', agent_id: agent.id, name: agent.name });
      } catch (err) {
        results.push({ index, status: 'error', error: err instanceof HttpError ? err.message : String(err) });
      }
    }
    return summarise(results, 'created');
  });

  app.delete('/api/agents/bulk', { schema: { summary: 'Kill several agents', body: idsBody(true) } }, async (request) => {
    const results: ItemResult[] = [];
    for (const id of request.body.ids ?? []) {
      const agent = isUuid(id) ? s.registry.get(id) : undefined;
      if (!isUuid(id)) results.push({ agent_id: id, status: 'error', error: `'${id}' is not a UUID` });
      else if (!agent) results.push({ agent_id: id, status: 'not_found', error: `agent '${id}' not found` });
      else {
        await kill(s, agent);
        results.push({ agent_id: id, status: 'killed' });
      }
    }
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
        const results: ItemResult[] = [];
        for (const id of ids) results.push(await setState(s, id, state));
        return summarise(results, 'ok');
      },
    );
  }
}

async function setState(s: AgentServices, id: string, state: AgentState): Promise<ItemResult> {
  if (!isUuid(id)) return { agent_id: id, status: 'error', error: `'${id}' is not a UUID` };
  if (!s.registry.get(id)) return { agent_id: id, status: 'not_found', error: `agent '${id}' not found` };
  if (state === 'Stopped') s.runner.stop(id);
  try {
    return { agent_id: id, status: 'ok', state: (await s.registry.setState(id, state)).state };
  } catch (err) {
    // Killed meanwhile (by another request or process).
    return { agent_id: id, status: 'not_found', error: err instanceof HttpError ? err.message : String(err) };
  }
}

function summarise(results: ItemResult[], success: string) {
  const ok = results.filter((r) => r.status === success).length;
  return { results, succeeded: ok, failed: results.length - ok, total: results.length };
}

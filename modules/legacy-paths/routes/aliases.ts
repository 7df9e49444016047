/** The older listing's paths (spec: "Paths that appear only in an older, partly conflicting listing"). */
import { type FastifyReply, type FastifyRequest, type Routes } from '@talon/module-sdk';
import { answer, inject, relay, reroute } from '../services/forward.ts';

const tags = ['legacy'];
const id = { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'] } as const;
const providerBody = {
  type: 'object',
  properties: { provider: { type: 'string', minLength: 1, maxLength: 100 }, model: { type: 'string', minLength: 1, maxLength: 200 } },
  required: ['provider'],
  additionalProperties: false,
} as const;

/** The query string of a URL, '?' included ('' without one). */
const q = (url: string) => (url.includes('?') ? url.slice(url.indexOf('?')) : '');
const enc = encodeURIComponent;

export interface AliasDeps {
  restart(): { modules: string[] };
  defaultModel(): unknown;
}

export function aliasRoutes(app: Routes, d: AliasDeps): void {
  /** An alias that hands the request as it came to another method and path. */
  const rerouted = (method: string, path: string, target: (params: Record<string, string>) => string, verb: string, params?: object) => {
    app.route({
      method: method as 'GET',
      url: path,
      schema: { summary: `Alias of ${verb} (older listing)`, tags, ...(params ? { params } : {}) },
      onRequest: async (request: FastifyRequest, reply: FastifyReply) =>
        reroute(app, request, reply, verb.split(' ')[0], target(request.params as Record<string, string>) + q(request.url)),
      handler: async () => undefined,
    });
  };
  rerouted('GET', '/api/agents/:id/stream', (p) => `/api/agents/${enc(p.id)}/attach`, 'GET /api/agents/{id}/attach', id);
  rerouted('PUT', '/api/triggers/:id', (p) => `/api/triggers/${enc(p.id)}`, 'PATCH /api/triggers/{id}', id);
  rerouted('DELETE', '/api/memory/:id', (p) => `/api/memory/items/${enc(p.id)}`, 'DELETE /api/memory/items/{id}', id);
  rerouted('GET', '/api/memory/sessions', () => '/api/sessions', 'GET /api/sessions');
  rerouted('GET', '/api/usage/agents', () => '/api/budget/agents', 'GET /api/budget/agents');
  rerouted('POST', '/a2a/tasks', () => '/a2a/tasks/send', 'POST /a2a/tasks/send');

  app.delete('/api/skills/:id', { schema: { summary: 'Alias of POST /api/skills/uninstall (older listing)', tags, params: id } }, async (request, reply) =>
    relay(request, reply, { method: 'POST', url: '/api/skills/uninstall', body: { name: request.params.id } }),
  );
  app.get(
    '/api/mcp/tools',
    { schema: { summary: 'Alias: the tools of every MCP server, from GET /api/mcp/servers (older listing)', tags } },
    async (request, reply) => {
      const res = await inject(request, { method: 'GET', url: '/api/mcp/servers' });
      if (res.statusCode !== 200) return answer(reply, res);
      const { servers } = res.json() as { servers: Array<{ name: string; tools?: Array<Record<string, unknown>> }> };
      const tools = servers.flatMap((s) => (s.tools ?? []).map((t) => ({ server: s.name, ...t })));
      return { tools, total: tools.length };
    },
  );
  app.get('/api/config/provider', { schema: { summary: 'Alias: the default model provider (older listing)', tags } }, async () => d.defaultModel());
  app.put(
    '/api/config/provider',
    { schema: { summary: 'Alias: sets default_model.provider (and model) through POST /api/config/set (older listing)', tags, body: providerBody } },
    async (request, reply) => {
      const { provider, model } = request.body;
      const sets: Array<[string, string]> = [
        ...(model === undefined ? [] : [['default_model.model', model] as [string, string]]),
        ['default_model.provider', provider],
      ];
      let res!: Awaited<ReturnType<typeof inject>>;
      for (const [path, value] of sets) {
        res = await inject(request, { method: 'POST', url: '/api/config/set', body: { path, value } });
        if (res.statusCode >= 400) break;
      }
      return answer(reply, res);
    },
  );
  app.post(
    '/api/restart',
    { schema: { summary: 'Graceful in-process restart: every module that is not a security module starts again (older listing)', tags } },
    async (_request, reply) => {
      return reply.code(202).send({ status: 'restarting', modules: d.restart().modules });
    },
  );
}

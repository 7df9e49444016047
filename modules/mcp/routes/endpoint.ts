/**
 * POST /mcp (the unauthenticated mount) and POST /api/mcp (the same transport
 * behind the normal authentication): JSON-RPC 2.0 over the MCP Streamable
 * HTTP transport of the official SDK, stateless, answering JSON. GET and
 * DELETE (the transport's event stream and session end) answer 405: there
 * are no sessions.
 *
 * The rule of the public mount: when api_key is set, a tools/call on /mcp for
 * a tool outside [mcp_server] public_tools needs the bearer; such a request is
 * served exactly as POST /api/mcp would serve it (the auth module checks the
 * bearer there), so the key is never read by this module.
 */
import { lazy, type FastifyReply, type FastifyRequest, type Routes } from '@talon/module-sdk';
import type { AgentRecord } from '@talon/agents';
import type { McpServerDeps } from '../services/mcp-server.ts';

/**
 * The official SDK (and zod under it) is a large share of the service's start-up time and memory: its side of the
 * endpoint is loaded with the first MCP request (the bundler keeps a dynamically imported file lazy).
 */
const loadSdkSide = lazy(() => import('../services/mcp-server.ts'));

export interface EndpointDeps extends McpServerDeps {
  keyRequired: () => boolean;
  publicTools: () => readonly string[];
  agentHeader: () => string;
}

type RpcId = string | number | null;

const body = { type: ['object', 'array'], description: 'one JSON-RPC 2.0 message, or a batch' } as const;

function rpcError(reply: FastifyReply, status: number, code: number, message: string, id: RpcId) {
  return reply.code(status).send({ jsonrpc: '2.0', error: { code, message }, id });
}

function messages(payload: unknown): Array<Record<string, unknown>> {
  const list = Array.isArray(payload) ? payload : [payload];
  return list.filter((m): m is Record<string, unknown> => typeof m === 'object' && m !== null);
}

const firstId = (payload: unknown): RpcId => {
  const id = messages(payload).find((m) => typeof m.id === 'string' || typeof m.id === 'number')?.id;
  return (id as RpcId | undefined) ?? null;
};

/** The tools/call names of the request that are not public. */
function guardedCalls(payload: unknown, publicTools: readonly string[]): string[] {
  return messages(payload)
    .filter((m) => m.method === 'tools/call')
    .map((m) => String((m.params as { name?: unknown } | undefined)?.name ?? ''))
    .filter((name) => !publicTools.includes(name));
}

function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || ['host', 'content-length', 'connection', 'transfer-encoding'].includes(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  // A plain JSON-RPC client (the spec's shape) need not know the transport's Accept rule: the answer is JSON either way.
  headers.set('accept', 'application/json, text/event-stream');
  headers.set('content-type', 'application/json');
  return new Request(`http://localhost${request.url}`, { method: 'POST', headers });
}

export function endpointRoutes(app: Routes, deps: EndpointDeps): void {
  const scopeOf = (request: FastifyRequest): AgentRecord | null | undefined => {
    const raw = request.headers[deps.agentHeader().toLowerCase()];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (!value) return undefined;
    const registry = deps.registry();
    return registry.get(value.toLowerCase()) ?? registry.findByName(value) ?? null;
  };

  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const scope = scopeOf(request);
    if (scope === null)
      return rpcError(
        reply,
        404,
        -32602,
        `${deps.agentHeader()}: no agent '${String(request.headers[deps.agentHeader().toLowerCase()])}'`,
        firstId(request.body),
      );
    const { answer } = await loadSdkSide();
    const res = await answer(deps, scope, webRequest(request), request.body);
    reply.code(res.status);
    res.headers.forEach((value, name) => void reply.header(name, value));
    return reply.send(res.text || undefined);
  };

  const schema = (summary: string, description: string) => ({ summary, description, tags: ['mcp'], body });

  app.post(
    '/mcp',
    {
      schema: schema(
        'MCP server (unauthenticated mount)',
        'initialize, tools/list and notifications need no credentials; with api_key set, tools/call needs the bearer unless the tool is in [mcp_server] public_tools',
      ),
      config: { public: true },
    },
    async (request, reply) => {
      if (deps.keyRequired()) {
        const guarded = guardedCalls(request.body, deps.publicTools());
        if (guarded.length) {
          if (!request.headers.authorization) {
            void reply.header('www-authenticate', 'Bearer');
            return rpcError(
              reply,
              401,
              -32001,
              `tools/call of '${guarded[0]}' on /mcp needs Authorization: Bearer <api_key> (it is not in [mcp_server] public_tools)`,
              firstId(request.body),
            );
          }
          return forward(app, request, reply);
        }
      }
      return serve(request, reply);
    },
  );
  app.post('/api/mcp', { schema: schema('MCP server (authenticated)', 'the same transport as POST /mcp, behind the bearer when api_key is set') }, serve);

  for (const url of ['/mcp', '/api/mcp']) {
    for (const method of ['GET', 'DELETE'] as const) {
      app.route({
        method,
        url,
        schema: { hide: true },
        config: { public: true },
        handler: async (_request, reply) =>
          reply.code(405).header('allow', 'POST').send({ error: 'this MCP server is stateless: send JSON-RPC with POST (no event stream, no session to end)' }),
      });
    }
  }
}

/** Serves the request as POST /api/mcp (authenticated there), from the same client address. */
async function forward(app: Routes, request: FastifyRequest, reply: FastifyReply) {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && !['host', 'content-length', 'connection', 'transfer-encoding'].includes(name))
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const res = await app.inject({ method: 'POST', url: '/api/mcp', headers, payload: JSON.stringify(request.body), remoteAddress: request.ip });
  reply.code(res.statusCode);
  for (const name of ['content-type', 'www-authenticate', 'retry-after']) {
    const value = res.headers[name];
    if (value !== undefined) void reply.header(name, value);
  }
  return reply.send(res.body || undefined);
}

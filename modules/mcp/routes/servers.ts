/** /api/mcp/servers, /api/mcp/health, /api/mcp/reload: the MCP servers this service connects to. */
import type { Routes } from '@talon/module-sdk';
import type { McpManager } from '../services/manager.ts';
import { serverBody } from '../services/body.ts';
import { serverView, type McpServers } from '../services/servers.ts';

const idParams = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 100, description: 'the server id or name' } },
  required: ['id'],
} as const;

const tags = ['mcp'];

export function serverRoutes(app: Routes, servers: McpServers, manager: McpManager, connectTimeoutMs: () => number): void {
  app.get('/api/mcp/servers', { schema: { summary: 'MCP servers with connection state and tools', tags } }, async () => {
    const list = manager.list().map(serverView);
    return { servers: list, total: list.length };
  });

  app.post(
    '/api/mcp/servers',
    { schema: { summary: 'Add an MCP server (raw spec or catalogue install); it connects in the background', tags, body: serverBody } },
    async (request, reply) => {
      const conn = await servers.create(request.body);
      request.log.info({ server: conn.spec.name, template: conn.spec.templateId }, 'MCP server added');
      return reply.code(201).send(serverView(conn));
    },
  );

  app.get('/api/mcp/servers/:id', { schema: { summary: 'One MCP server (by id or name)', tags, params: idParams } }, async (request) => {
    return serverView(manager.get(request.params.id));
  });

  app.put(
    '/api/mcp/servers/:id',
    { schema: { summary: 'Replace the configuration of an MCP server (stored credentials are kept unless given)', tags, params: idParams, body: serverBody } },
    async (request) => serverView(await servers.replace(request.params.id, request.body)),
  );

  app.delete(
    '/api/mcp/servers/:id',
    { schema: { summary: 'Remove an MCP server (a stdio server is stopped with its process tree)', tags, params: idParams } },
    async (request) => {
      const spec = await servers.remove(request.params.id);
      request.log.info({ server: spec.name }, 'MCP server removed');
      return { status: 'removed', id: spec.id, name: spec.name };
    },
  );

  app.post(
    '/api/mcp/servers/:id/reconnect',
    { schema: { summary: 'Reconnect an MCP server now and wait for the outcome', tags, params: idParams } },
    async (request) => {
      const conn = manager.get(request.params.id);
      // connect() resolves when its own attempt is over (bounded by the connect timeout of the SDK client).
      await Promise.race([conn.connect(), new Promise((resolve) => setTimeout(resolve, connectTimeoutMs() + 1000).unref())]);
      return { ...serverView(conn), tool_count: conn.tools.length };
    },
  );

  app.get('/api/mcp/health', { schema: { summary: 'Aggregate and per-server health of the MCP connections', tags }, config: { quiet: true } }, async () =>
    manager.health(),
  );

  app.post('/api/mcp/reload', { schema: { summary: 'Reload the catalogue and config.toml servers; reconnect moved and failed servers', tags } }, async () =>
    servers.reload(),
  );
}

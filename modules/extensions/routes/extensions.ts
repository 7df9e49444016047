/** /api/extensions: list with status, info, install (catalogue name or template file, with credentials), uninstall. */
import { badRequest, type Routes } from '@talon/module-sdk';
import type { McpServerState, McpTemplate } from '@talon/mcp';
import { statusOf, type Extensions } from '../services/extensions.ts';

const nameParams = { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 100 } }, required: ['name'] } as const;

const installBody = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 64, description: 'an extension of the catalogue (GET /api/extensions)' },
    path: { type: 'string', minLength: 1, maxLength: 4096, description: 'an absolute path to a template file in the MCP catalogue format' },
    credentials: {
      type: 'object',
      additionalProperties: { type: 'string', maxLength: 8192 },
      maxProperties: 100,
      description: 'the required environment: NAME → value (stored encrypted, never read back)',
    },
  },
  additionalProperties: false,
} as const;

const uninstallBody = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 64 } },
  required: ['name'],
  additionalProperties: false,
} as const;

const listQuery = {
  type: 'object',
  properties: {
    category: { type: 'string', maxLength: 64 },
    status: { type: 'string', enum: ['available', 'installed', 'ready', 'error'] },
  },
  additionalProperties: false,
} as const;

const tags = ['extensions'];

function summary(t: McpTemplate, server: McpServerState | undefined) {
  return {
    name: t.id,
    display_name: t.name,
    description: t.description,
    icon: t.icon,
    category: t.category,
    tags: t.tags,
    status: statusOf(server),
    installed: Boolean(server),
    tool_count: server?.tool_count ?? 0,
    required_env: t.required_env.map((e) => e.name),
    source: t.source,
    server_id: server?.id ?? null,
  };
}

export function extensionRoutes(app: Routes, extensions: Extensions): void {
  app.get('/api/extensions', { schema: { summary: 'Extensions (the MCP catalogue) with their status', tags, querystring: listQuery } }, async (request) => {
    const all = extensions.templates().map((t) => summary(t, extensions.server(t.id)));
    const { category, status } = request.query;
    const list = all.filter((e) => (!category || e.category === category) && (!status || e.status === status));
    return { extensions: list, total: list.length, categories: [...new Set(all.map((e) => e.category))].sort() };
  });

  app.get(
    '/api/extensions/:name',
    { schema: { summary: 'One extension: required environment, setup instructions and health', tags, params: nameParams } },
    async (request) => {
      const t = extensions.template(request.params.name);
      const server = extensions.server(t.id);
      return {
        ...summary(t, server),
        required_env: t.required_env,
        setup_instructions: t.setup_instructions,
        transport: { type: t.transport.type, command: t.transport.command ?? null, args: t.transport.args, url: t.transport.url ?? null },
        health: server
          ? { status: server.status, connected: server.connected, tool_count: server.tool_count, last_error: server.last_error }
          : { status: 'not_installed', connected: false, tool_count: 0, last_error: null },
      };
    },
  );

  app.post(
    '/api/extensions/install',
    { schema: { summary: 'Install an extension from the catalogue or a template file', tags, body: installBody } },
    async (request, reply) => {
      const { name, path, credentials = {} } = request.body;
      if ((name === undefined) === (path === undefined)) throw badRequest('give name (an extension of the catalogue) or path (a template file), one of them');
      const server = name !== undefined ? await extensions.installByName(name, credentials) : await extensions.installFromPath(path!, credentials);
      request.log.info({ extension: server.template_id, credentials: Object.keys(credentials) }, 'extension installed');
      return reply
        .code(201)
        .send({ status: 'installed', name: server.template_id, server_id: server.id, connected: server.connected, extension_status: statusOf(server) });
    },
  );

  app.post('/api/extensions/uninstall', { schema: { summary: 'Uninstall an extension by name', tags, body: uninstallBody } }, async (request) => {
    await extensions.uninstall(request.body.name);
    return { status: 'uninstalled', name: request.body.name };
  });
}

/** The mcp.integrations service (extensions): catalogue templates and the servers installed from them. */
import { parse as parseToml } from 'smol-toml';
import type { McpIntegrations, McpServerState } from '@talon/mcp';
import { toTemplate, type Catalog } from './catalog.ts';
import type { Connection } from './connection.ts';
import type { McpManager } from './manager.ts';
import type { McpServers } from './servers.ts';

const state = (c: Connection): McpServerState => ({
  id: c.spec.id,
  name: c.spec.name,
  template_id: c.spec.templateId ?? null,
  status: c.status,
  connected: c.status === 'connected',
  tool_count: c.tools.length,
  last_error: c.lastError ?? null,
  source: c.spec.source,
});

export function integrations(catalog: Catalog, manager: McpManager, servers: McpServers): McpIntegrations {
  return {
    catalog: () => catalog.list(),
    parseTemplate: (toml, source) => toTemplate(parseToml(toml) as Record<string, unknown>, source),
    servers: () => manager.list().map(state),
    install: async (template, credentials) => state(await servers.createFrom(template, credentials)),
    uninstall: async (idOrName) => void (await servers.remove(idOrName)),
  };
}

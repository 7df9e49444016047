/**
 * The MCP servers as the API sees them: the servers of config.toml (read-only
 * here) and those stored through the API, kept connected by the manager.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { conflict } from '@talon/module-sdk';
import type { McpConfig } from '../config.ts';
import type { Catalog, Template } from './catalog.ts';
import type { Connection } from './connection.ts';
import type { McpManager } from './manager.ts';
import type { ServerStore } from './store.ts';
import { specFromBody, type ServerBody } from './body.ts';
import { checkName, checkTransport, configServerId, parseEnvList, parseHeaderList, type ServerSpec } from './spec.ts';
import { agentToolName } from './naming.ts';

export interface ServersDeps {
  store: ServerStore;
  manager: McpManager;
  catalog: Catalog;
  config: () => McpConfig;
  log: Logger;
  /** Reads the hub registry's layer of the catalogue again (catalog-registry.ts). */
  refreshRegistry: () => Promise<unknown>;
}

export class McpServers {
  constructor(private readonly deps: ServersDeps) {}

  /** Every server that should run: config.toml first, then the stored ones (a stored name that clashes is left out). */
  specs(): ServerSpec[] {
    const fromConfig: ServerSpec[] = [];
    for (const entry of this.deps.config().mcp_servers) {
      try {
        fromConfig.push({
          id: configServerId(entry.name),
          name: checkName(entry.name),
          source: 'config',
          templateId: entry.template_id,
          transport: checkTransport(entry.transport),
          env: parseEnvList(entry.env, process.env),
          headers: parseHeaderList(entry.headers),
          timeoutSecs: entry.timeout_secs,
        });
      } catch (err) {
        this.deps.log.error({ server: entry.name, err: (err as Error).message }, 'MCP server of config.toml left out');
      }
    }
    const names = new Set(fromConfig.map((s) => s.name));
    const stored = this.deps.store.list((name, err) => this.deps.log.error({ server: name, err: err.message }, 'stored MCP credentials could not be opened'));
    return [...fromConfig, ...stored.filter((s) => !names.has(s.name))];
  }

  /** (Re)reads the catalogue and reconnects what changed; returns what happened. */
  async reload() {
    const { catalog_dirs: dirs, catalog_urls: urls } = this.deps.config();
    await this.deps.catalog.load(dirs, urls);
    await this.deps.refreshRegistry().catch((err: Error) => this.deps.log.warn({ err: err.message }, "the hub registry's MCP templates could not be read"));
    const templates = this.deps.catalog.list().length;
    const reconnected = this.deps.manager.reconcile(this.specs());
    const retried = this.deps.manager.retryFailed().filter((name) => !reconnected.includes(name));
    return { status: 'reloaded', catalog: templates, reconnected: [...reconnected, ...retried] };
  }

  async create(body: ServerBody): Promise<Connection> {
    const spec = specFromBody(body, randomUUID(), (id) => this.deps.catalog.get(id));
    return this.stored(spec);
  }

  /** A server from a template that may not be in the catalogue (an extension installed from a file). */
  async createFrom(template: Template, credentials: Record<string, string>): Promise<Connection> {
    const spec = specFromBody({ template_id: template.id, credentials }, randomUUID(), (id) => (id === template.id ? template : undefined));
    return this.stored(spec);
  }

  async replace(idOrName: string, body: ServerBody): Promise<Connection> {
    const current = this.writable(idOrName);
    const spec = specFromBody({ ...body, name: body.name ?? current.spec.name }, current.spec.id, (id) => this.deps.catalog.get(id), current.spec);
    return this.stored(spec);
  }

  /** Stores a server (the name checked against the running ones here and, in the transaction, the stored ones) and connects it. */
  private async stored(spec: ServerSpec): Promise<Connection> {
    this.deps.manager.checkNameFree(spec.name, spec.id);
    await this.deps.store.save(spec);
    this.deps.manager.reconcile(this.specs());
    return this.deps.manager.get(spec.id);
  }

  /** Another process added, changed or removed a stored server: read them again and reconnect what changed. */
  async followStore(): Promise<void> {
    await this.deps.store.load();
    this.deps.manager.reconcile(this.specs());
  }

  async remove(idOrName: string): Promise<ServerSpec> {
    const { spec } = this.writable(idOrName);
    await this.deps.store.remove(spec.id);
    await this.deps.manager.remove(spec.id);
    return spec;
  }

  private writable(idOrName: string): Connection {
    const conn = this.deps.manager.get(idOrName);
    if (conn.spec.source === 'config') throw conflict(`MCP server '${conn.spec.name}' is defined in config.toml [[mcp_servers]]: change it there`);
    return conn;
  }
}

/** The listing shape: never an env or header value, only their names. */
export function serverView(conn: Connection) {
  const { spec } = conn;
  return {
    id: spec.id,
    name: spec.name,
    transport: spec.transport.type,
    command: spec.transport.command ?? null,
    args: spec.transport.args,
    url: spec.transport.url ?? null,
    env: Object.keys(spec.env),
    headers: Object.keys(spec.headers),
    timeout_secs: spec.timeoutSecs ?? null,
    template_id: spec.templateId ?? null,
    source: spec.source,
    status: conn.status,
    connected: conn.status === 'connected',
    tools: conn.tools.map((t) => ({ name: t.name, description: t.description, agent_tool: agentToolName(spec.name, t.name) })),
    last_error: conn.lastError ?? null,
  };
}

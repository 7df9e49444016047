/**
 * Extensions are the MCP catalogue seen as integrations: each template is an extension, installed when an MCP
 * server was added from it. Templates installed from a file (not in the catalogue) are kept in this module's data
 * folder so they stay listed. Status: available (not installed), installed (added, not connected yet), ready
 * (connected), error (the server failed).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { badRequest, conflict, forbidden, isInside, notFound } from '@talon/module-sdk';
import type { McpIntegrations, McpServerState, McpTemplate } from '@talon/mcp';

export type ExtensionStatus = 'available' | 'installed' | 'ready' | 'error';

export interface ExtensionsDeps {
  mcp: () => McpIntegrations;
  templatesDir: string;
  installRoots: () => string[];
  home: string;
  log: Logger;
}

export function statusOf(server: McpServerState | undefined): ExtensionStatus {
  if (!server) return 'available';
  if (server.connected) return 'ready';
  return server.status === 'error' || server.last_error ? 'error' : 'installed';
}

export class Extensions {
  private own = new Map<string, McpTemplate>();

  constructor(private readonly deps: ExtensionsDeps) {}

  /** Reads the templates installed from files. */
  load(): void {
    this.own.clear();
    if (!existsSync(this.deps.templatesDir)) return;
    for (const file of readdirSync(this.deps.templatesDir).filter((f) => f.endsWith('.toml'))) {
      const full = path.join(this.deps.templatesDir, file);
      try {
        const t = this.deps.mcp().parseTemplate(readFileSync(full, 'utf8'), full);
        this.own.set(t.id, t);
      } catch (err) {
        this.deps.log.warn({ file: full, err: (err as Error).message }, 'extension template skipped');
      }
    }
  }

  templates(): McpTemplate[] {
    const catalog = this.deps.mcp().catalog();
    const ids = new Set(catalog.map((t) => t.id));
    return [...catalog, ...[...this.own.values()].filter((t) => !ids.has(t.id))].sort((a, b) => a.id.localeCompare(b.id));
  }

  template(name: string): McpTemplate {
    const t = this.templates().find((x) => x.id === name);
    if (!t) throw notFound(`extension '${name}' not found`);
    return t;
  }

  server(name: string): McpServerState | undefined {
    return this.deps
      .mcp()
      .servers()
      .find((s) => s.template_id === name);
  }

  async installByName(name: string, credentials: Record<string, string>): Promise<McpServerState> {
    const template = this.template(name);
    if (this.server(name)) throw conflict(`extension '${name}' is already installed`);
    return this.deps.mcp().install(template, credentials);
  }

  /** A template file (or a folder holding one) inside the install roots: kept here, then installed. */
  async installFromPath(given: string, credentials: Record<string, string>): Promise<McpServerState> {
    const file = this.localFile(given);
    let template: McpTemplate;
    try {
      template = this.deps.mcp().parseTemplate(readFileSync(file, 'utf8'), file);
    } catch (err) {
      throw badRequest(`invalid extension template '${given}': ${(err as Error).message.split('\n')[0]}`);
    }
    if (this.templates().some((t) => t.id === template.id)) throw conflict(`an extension named '${template.id}' already exists`);
    const state = await this.deps.mcp().install(template, credentials);
    mkdirSync(this.deps.templatesDir, { recursive: true });
    const kept = path.join(this.deps.templatesDir, `${template.id}.toml`);
    writeFileSync(kept, readFileSync(file));
    this.own.set(template.id, { ...template, source: kept });
    return state;
  }

  async uninstall(name: string): Promise<void> {
    const server = this.server(name);
    if (!server) throw notFound(`extension '${name}' is not installed`);
    await this.deps.mcp().uninstall(server.id);
    const own = this.own.get(name);
    if (own) {
      rmSync(path.join(this.deps.templatesDir, `${name}.toml`), { force: true });
      this.own.delete(name);
    }
  }

  private localFile(given: string): string {
    if (!path.isAbsolute(given)) throw badRequest('path must be an absolute path to a template .toml file');
    let real: string;
    try {
      real = realpathSync(given);
    } catch {
      throw notFound(`no extension template at '${given}'`);
    }
    if (statSync(real).isDirectory()) {
      const tomls = readdirSync(real).filter((f) => f.endsWith('.toml'));
      if (tomls.length !== 1) throw badRequest(`'${given}' must hold exactly one .toml template (it holds ${tomls.length})`);
      real = path.join(real, tomls[0]);
    }
    const roots = this.deps.installRoots().length ? this.deps.installRoots() : [os.homedir(), this.deps.home];
    if (!roots.some((root) => existsSync(root) && isInside(realpathSync(root), real)))
      throw forbidden(`'${given}' is outside the folders extensions may be installed from ([extensions] install_roots)`);
    return real;
  }
}

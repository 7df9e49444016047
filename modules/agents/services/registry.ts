/**
 * The agent registry: AgentRecords in memory, written through to
 * agents_agents so they survive a restart.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import { HttpError, badRequest, conflict, notFound, prepared } from '@talon/module-sdk';
import type { AgentManifest, AgentMode, AgentRecord, AgentRegistry, AgentState, SpawnRequest } from '@talon/agents';
import type { CatalogService } from '@talon/catalog';
import { DEFAULT_SYSTEM_PROMPT, list, parseManifest } from './manifest.ts';
import type { SessionService } from './sessions.ts';

interface Row {
  id: string;
  name: string;
  created_at: string;
  manifest_toml: string;
  data: string;
}

/** What is stored in the data column: the record minus columns and derived fields. */
type Stored = Omit<AgentRecord, 'id' | 'name' | 'createdAt' | 'workspace'>;

export interface RegistryDeps {
  db: Database;
  workspaces: string;
  sessions: SessionService;
  catalog: () => CatalogService | undefined;
  onSpawned: (agent: AgentRecord) => void;
  onTerminated: (agent: AgentRecord) => void;
  /** agentHooks.manifest: derived values filled in by other modules (a profile's tools). */
  expandManifest: (manifest: AgentManifest) => AgentManifest;
  /** agentHooks.authorizeSpawn: a refusal, or undefined to go on. */
  authorizeSpawn: (request: SpawnRequest) => { status: number; error: string } | undefined;
}

export type AgentPatch = Partial<
  Pick<
    AgentRecord,
    | 'name'
    | 'manifest'
    | 'maxLlmTokensPerHour'
    | 'description'
    | 'systemPrompt'
    | 'tags'
    | 'tools'
    | 'skills'
    | 'mcpServers'
    | 'identity'
    | 'config'
    | 'state'
    | 'mode'
    | 'model'
  >
>;

export class AgentStore implements AgentRegistry {
  private readonly agents = new Map<string, AgentRecord>();
  private readonly toml = new Map<string, string>();
  /** Every record, in creation order, kept until the next change (the agent list reads it on every request). */
  private snapshot?: readonly AgentRecord[];

  constructor(private readonly deps: RegistryDeps) {}

  /** Reads every stored agent (called once at start). */
  load(): void {
    const rows = prepared(this.deps.db, 'SELECT * FROM agents_agents ORDER BY created_at, rowid').all() as Row[];
    for (const row of rows) {
      const data = JSON.parse(row.data) as Stored;
      const record: AgentRecord = { ...data, id: row.id, name: row.name, createdAt: row.created_at, workspace: this.workspaceOf(row.id) };
      this.agents.set(row.id, record);
      this.snapshot = undefined;
      this.toml.set(row.id, row.manifest_toml);
    }
  }

  list(): AgentRecord[] {
    return [...this.all()];
  }

  /** Every record as one shared array, the same instance until an agent changes: do not modify it. */
  all(): readonly AgentRecord[] {
    this.snapshot ??= [...this.agents.values()];
    return this.snapshot;
  }

  get(id: string): AgentRecord | undefined {
    return this.agents.get(id);
  }

  /** The agent or a 404 naming it. */
  require(id: string): AgentRecord {
    const agent = this.agents.get(id);
    if (!agent) throw notFound(`agent '${id}' not found`);
    return agent;
  }

  findByName(name: string): AgentRecord | undefined {
    const lower = name.toLowerCase();
    return this.list().find((a) => a.name.toLowerCase() === lower);
  }

  manifestToml(id: string): string | undefined {
    return this.toml.get(id);
  }

  spawn(input: { manifestToml: string; parentId?: string; signedManifest?: string }): AgentRecord {
    const manifest = this.deps.expandManifest(parseManifest(input.manifestToml));
    const refusal = this.deps.authorizeSpawn({ ...input, manifest });
    if (refusal) throw new HttpError(refusal.status, refusal.error);
    if (this.findByName(manifest.name)) throw conflict(`an agent named '${manifest.name}' already exists`);
    const id = randomUUID();
    const record: AgentRecord = {
      id,
      state: 'Running',
      mode: 'Normal',
      createdAt: new Date().toISOString(),
      sessionId: '',
      identity: {},
      config: {},
      workspace: this.workspaceOf(id),
      ...this.fromManifest(manifest),
    };
    if (input.parentId) record.parentId = input.parentId;
    mkdirSync(record.workspace, { recursive: true });
    this.deps.db.transaction(() => {
      prepared(this.deps.db, 'INSERT INTO agents_agents (id, name, created_at, manifest_toml, data) VALUES (?, ?, ?, ?, ?)').run(
        id,
        record.name,
        record.createdAt,
        input.manifestToml,
        '{}',
      );
      record.sessionId = this.deps.sessions.create(id);
      this.persist(record);
    })();
    this.agents.set(id, record);
    this.snapshot = undefined;
    this.toml.set(id, input.manifestToml);
    this.deps.onSpawned(record);
    return record;
  }

  kill(id: string): boolean {
    const agent = this.agents.get(id);
    if (!agent) return false;
    prepared(this.deps.db, 'DELETE FROM agents_agents WHERE id = ?').run(id);
    this.agents.delete(id);
    this.snapshot = undefined;
    this.toml.delete(id);
    this.deps.onTerminated(agent);
    return true;
  }

  setModel(id: string, model: string): AgentRecord {
    const agent = this.require(id);
    const wanted = model.trim();
    if (!wanted) throw badRequest('model must be a non-empty string');
    if (agent.mode === 'Stable') throw conflict(`agent '${agent.name}' is in Stable mode: its model is pinned (switch to Normal first)`);
    return this.update(id, { model: this.lookupModel(wanted, agent.model.provider) });
  }

  /** Applies a partial change and persists it. */
  update(id: string, patch: AgentPatch): AgentRecord {
    const agent = this.require(id);
    if (patch.name !== undefined && patch.name !== agent.name) {
      const clash = this.findByName(patch.name);
      if (clash && clash.id !== id) throw conflict(`an agent named '${patch.name}' already exists`);
    }
    const next: AgentRecord = { ...agent, ...patch };
    this.deps.db.transaction(() => {
      if (next.name !== agent.name) prepared(this.deps.db, 'UPDATE agents_agents SET name = ? WHERE id = ?').run(next.name, id);
      this.persist(next);
    })();
    this.agents.set(id, next);
    this.snapshot = undefined;
    return next;
  }

  /** PATCH with manifest_toml: the new manifest replaces every field it defines; identity, config and sessions stay. */
  replaceManifest(id: string, manifestToml: string): AgentRecord {
    const agent = this.require(id);
    const fields = this.fromManifest(this.deps.expandManifest(parseManifest(manifestToml)));
    if (agent.mode === 'Stable' && (fields.model.provider !== agent.model.provider || fields.model.model !== agent.model.model)) {
      throw conflict(`agent '${agent.name}' is in Stable mode: its model is pinned (switch to Normal first)`);
    }
    const next = this.update(id, fields);
    prepared(this.deps.db, 'UPDATE agents_agents SET manifest_toml = ? WHERE id = ?').run(manifestToml, id);
    this.toml.set(id, manifestToml);
    return next;
  }

  setState(id: string, state: AgentState): AgentRecord {
    return this.update(id, { state });
  }

  /** Stable pins the current model and freezes the skill list; Normal lifts both. */
  setMode(id: string, mode: AgentMode): AgentRecord {
    return this.update(id, { mode });
  }

  setSessionId(id: string, sessionId: string): AgentRecord {
    const agent = this.require(id);
    const next = { ...agent, sessionId };
    this.persist(next);
    this.agents.set(id, next);
    this.snapshot = undefined;
    return next;
  }

  /** A new agent from the same manifest (and current settings) with a fresh session. */
  clone(id: string): AgentRecord {
    const source = this.require(id);
    const toml = this.toml.get(id) ?? '';
    let name = `${source.name}-clone`;
    for (let n = 2; this.findByName(name); n++) name = `${source.name}-clone-${n}`;
    const copy = this.spawn({ manifestToml: toml.replace(/^(\s*name\s*=\s*).*$/m, `$1${JSON.stringify(name)}`) });
    return this.update(copy.id, {
      name,
      description: source.description,
      tags: source.tags,
      systemPrompt: source.systemPrompt,
      model: source.model,
      tools: source.tools,
      skills: source.skills,
      mcpServers: source.mcpServers,
      identity: source.identity,
      config: source.config,
    });
  }

  private fromManifest(manifest: AgentManifest) {
    const extra = manifest.extra;
    return {
      name: manifest.name,
      manifest,
      description: manifest.description ?? '',
      tags: manifest.tags ?? [],
      systemPrompt: manifest.model.system_prompt ?? DEFAULT_SYSTEM_PROMPT,
      model: { provider: manifest.model.provider, model: this.resolveAlias(manifest.model.model) },
      tools: manifest.capabilities.tools,
      skills: extra.skills === undefined ? [] : list(extra.skills, 'skills'),
      mcpServers: extra.mcp_servers === undefined ? [] : list(extra.mcp_servers, 'mcp_servers'),
      maxLlmTokensPerHour: manifest.capabilities.max_llm_tokens_per_hour ?? 0,
    };
  }

  /**
   * id or alias → {provider, model}. The catalog decides when it knows the
   * name; a name it does not know is refused only for a catalogued provider
   * (the default provider and custom providers cannot be checked).
   */
  lookupModel(wanted: string, currentProvider: string): AgentRecord['model'] {
    const catalog = this.deps.catalog();
    const entry = catalog?.model(wanted);
    if (entry) return { provider: entry.provider, model: entry.id };
    if (catalog && currentProvider !== 'default' && catalog.provider(currentProvider)) throw notFound(`unknown model '${wanted}'`);
    return { provider: currentProvider, model: wanted };
  }

  private resolveAlias(model: string): string {
    return this.deps.catalog()?.resolveAlias(model) ?? model;
  }

  private workspaceOf(id: string): string {
    return path.join(this.deps.workspaces, id);
  }

  private persist(record: AgentRecord): void {
    const { id, name: _name, createdAt: _created, workspace: _workspace, ...data } = record;
    prepared(this.deps.db, 'UPDATE agents_agents SET data = ? WHERE id = ?').run(JSON.stringify(data), id);
  }
}

/**
 * The agent registry: AgentRecords in memory (every lookup of a request is served from there), written through to
 * agents_agents so they survive a restart and reach the other processes on the database: each write notes 'agents'
 * with the agent's id, and the other processes read that row again within a poll of the change feed.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { HttpError, badRequest, conflict, notFound, type ChangeFeed, type Store } from '@talon/module-sdk';
import type { AgentManifest, AgentMode, AgentRecord, AgentRegistry, AgentState, ManifestProblem, SpawnRequest } from '@talon/agents';
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
  store: Store;
  changes: ChangeFeed;
  workspaces: string;
  sessions: SessionService;
  catalog: () => CatalogService | undefined;
  onSpawned: (agent: AgentRecord) => void;
  /** An agent killed here (its uploads and traces go with it). */
  onTerminated: (agent: AgentRecord) => Promise<void>;
  /** An agent another process changed (`after`) or killed (no `after`): a kill or a stop ends its turns here. */
  onChangedElsewhere: (before: AgentRecord, after: AgentRecord | undefined) => void;
  /** agentHooks.manifest: derived values filled in by other modules (a profile's tools). */
  expandManifest: (manifest: AgentManifest) => AgentManifest;
  /** The names the manifest uses that nothing knows (manifest-check.ts). */
  checkManifest: (manifest: AgentManifest) => ManifestProblem[];
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
    | 'sessionId'
  >
>;

/** The change-feed topic of agent records (key: the agent id; '' for all). */
export const AGENTS_TOPIC = 'agents';

export class AgentStore implements AgentRegistry {
  private readonly agents = new Map<string, AgentRecord>();
  private readonly toml = new Map<string, string>();
  /** Every record, in creation order, kept until the next change (the agent list reads it on every request). */
  private snapshot?: readonly AgentRecord[];
  /** Counts the writes made here: a re-read another process's note asked for is done again if one overtook it. */
  private writes = 0;

  constructor(private readonly deps: RegistryDeps) {
    deps.changes.on(AGENTS_TOPIC, (id) => (id ? this.reload(id) : this.load()));
  }

  /** Reads every stored agent (at start; again when another process asks for it). */
  async load(): Promise<void> {
    const order = this.deps.store.pick({ sqlite: 'created_at, rowid', postgres: 'created_at, id' });
    const rows = await this.deps.store.many<Row>(`SELECT * FROM agents_agents ORDER BY ${order}`);
    const before = new Map(this.agents);
    this.agents.clear();
    this.toml.clear();
    const changed: Array<[AgentRecord, AgentRecord]> = [];
    for (const row of rows) {
      const record = this.fromRow(row);
      const old = before.get(row.id);
      if (old) changed.push([old, record]);
      before.delete(row.id);
      this.agents.set(row.id, record);
      this.toml.set(row.id, row.manifest_toml);
    }
    this.snapshot = undefined;
    for (const [old, record] of changed) this.deps.onChangedElsewhere(old, record);
    for (const gone of before.values()) this.deps.onChangedElsewhere(gone, undefined);
  }

  /** Another process changed, made or killed this agent: its row is read again. */
  async reload(id: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const before = this.writes;
      const row = await this.deps.store.one<Row>('SELECT * FROM agents_agents WHERE id = ?', [id]);
      // A write here overtook the read: read again (what was read may be older than what was written).
      if (before !== this.writes && attempt < 3) continue;
      const old = this.agents.get(id);
      if (row) {
        const record = this.fromRow(row);
        this.put(record, row.manifest_toml);
        if (old) this.deps.onChangedElsewhere(old, record);
        return;
      }
      if (!old) return;
      this.drop(id);
      this.deps.onChangedElsewhere(old, undefined);
      return;
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
    return this.all().find((a) => a.name.toLowerCase() === lower);
  }

  manifestToml(id: string): string | undefined {
    return this.toml.get(id);
  }

  async spawn(input: { manifestToml: string; parentId?: string; signedManifest?: string }): Promise<AgentRecord> {
    const manifest = this.checked(input.manifestToml);
    const refusal = this.deps.authorizeSpawn({ ...input, manifest });
    if (refusal) throw new HttpError(refusal.status, refusal.error);
    if (this.findByName(manifest.name)) throw nameTaken(manifest.name);
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
    await nameUnique(
      this.deps.store.tx(async (t) => {
        record.sessionId = await this.deps.sessions.create(id, undefined, t);
        await t.run('INSERT INTO agents_agents (id, name, created_at, manifest_toml, data) VALUES (?, ?, ?, ?, ?)', [
          id,
          record.name,
          record.createdAt,
          input.manifestToml,
          stored(record),
        ]);
        await this.deps.changes.note(AGENTS_TOPIC, id, t);
      }),
      record.name,
    );
    this.put(record, input.manifestToml);
    this.deps.onSpawned(record);
    return record;
  }

  async kill(id: string): Promise<boolean> {
    const agent = this.agents.get(id);
    if (!agent) return false;
    const { changes } = await this.deps.store.tx(async (t) => {
      const result = await t.run('DELETE FROM agents_agents WHERE id = ?', [id]);
      if (result.changes) await this.deps.changes.note(AGENTS_TOPIC, id, t);
      return result;
    });
    // Killed meanwhile, here (a second request) or by another process (whose feed note has not come yet).
    if (!this.agents.has(id)) return false;
    this.drop(id);
    if (!changes) {
      this.deps.onChangedElsewhere(agent, undefined);
      return false;
    }
    await this.deps.onTerminated(agent);
    return true;
  }

  async setModel(id: string, model: string): Promise<AgentRecord> {
    const agent = this.require(id);
    const wanted = model.trim();
    if (!wanted) throw badRequest('model must be a non-empty string');
    if (agent.mode === 'Stable') throw conflict(`agent '${agent.name}' is in Stable mode: its model is pinned (switch to Normal first)`);
    return this.update(id, { model: this.lookupModel(wanted, agent.model.provider) });
  }

  /**
   * Applies a partial change and persists it: the stored record is read, changed and written in one transaction, so
   * a change made meanwhile by another process is kept. `manifestToml` replaces the stored manifest text too.
   */
  async update(id: string, patch: AgentPatch, manifestToml?: string): Promise<AgentRecord> {
    const agent = this.require(id);
    if (patch.name !== undefined && patch.name !== agent.name) {
      const clash = this.findByName(patch.name);
      if (clash && clash.id !== id) throw nameTaken(patch.name);
    }
    const written = await nameUnique(
      this.deps.store.tx(async (t) => {
        // PostgreSQL runs transactions side by side: the row stays locked until the commit, so a change made meanwhile waits.
        const row = await t.one<Row>(`SELECT * FROM agents_agents WHERE id = ?${t.pick({ sqlite: '', postgres: ' FOR UPDATE' })}`, [id]);
        if (!row) return undefined;
        const next: AgentRecord = { ...this.fromRow(row), ...patch };
        const toml = manifestToml ?? row.manifest_toml;
        await t.run('UPDATE agents_agents SET name = ?, manifest_toml = ?, data = ? WHERE id = ?', [next.name, toml, stored(next), id]);
        await this.deps.changes.note(AGENTS_TOPIC, id, t);
        return { next, toml };
      }),
      patch.name ?? agent.name,
    );
    if (!written) {
      // Killed by another process: forget it here too.
      await this.reload(id);
      throw notFound(`agent '${id}' not found`);
    }
    this.put(written.next, written.toml);
    return written.next;
  }

  /** PATCH with manifest_toml: the new manifest replaces every field it defines; identity, config and sessions stay. */
  async replaceManifest(id: string, manifestToml: string): Promise<AgentRecord> {
    const agent = this.require(id);
    const fields = this.fromManifest(this.checked(manifestToml));
    if (agent.mode === 'Stable' && (fields.model.provider !== agent.model.provider || fields.model.model !== agent.model.model)) {
      throw conflict(`agent '${agent.name}' is in Stable mode: its model is pinned (switch to Normal first)`);
    }
    return this.update(id, fields, manifestToml);
  }

  setState(id: string, state: AgentState): Promise<AgentRecord> {
    return this.update(id, { state });
  }

  /** Stable pins the current model and freezes the skill list; Normal lifts both. */
  setMode(id: string, mode: AgentMode): Promise<AgentRecord> {
    return this.update(id, { mode });
  }

  setSessionId(id: string, sessionId: string): Promise<AgentRecord> {
    return this.update(id, { sessionId });
  }

  /** A new agent from the same manifest (and current settings) with a fresh session. */
  async clone(id: string): Promise<AgentRecord> {
    const source = this.require(id);
    const toml = this.toml.get(id) ?? '';
    let name = `${source.name}-clone`;
    for (let n = 2; this.findByName(name); n++) name = `${source.name}-clone-${n}`;
    const copy = await this.spawn({ manifestToml: toml.replace(/^(\s*name\s*=\s*).*$/m, `$1${JSON.stringify(name)}`) });
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

  /**
   * What POST /api/agents/validate answers: every problem of the manifest (its TOML, its keys, the names it uses, a
   * name another agent has), each with its field; none when a spawn (or, with `agentId`, that agent's update) would
   * be accepted by these checks.
   */
  problems(manifestToml: string, agentId?: string): ManifestProblem[] {
    let manifest: AgentManifest;
    try {
      manifest = parseManifest(manifestToml);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      return [{ field: /'([a-z_.]+)'/.exec(err.message)?.[1] ?? 'manifest', message: err.message }];
    }
    const problems = this.deps.checkManifest(manifest);
    const clash = this.findByName(manifest.name);
    if (clash && clash.id !== agentId) problems.unshift({ field: 'name', message: nameTaken(manifest.name).message });
    return problems;
  }

  /**
   * The parsed and expanded manifest, or a 400 naming every unknown name it uses (`problems` lists them by field).
   * The names are checked as written: what the manifest hook derives (a profile's tools) is the deriving module's.
   */
  private checked(manifestToml: string): AgentManifest {
    const written = parseManifest(manifestToml);
    const manifest = this.deps.expandManifest(written);
    const problems = this.deps.checkManifest(written);
    if (problems.length) throw new HttpError(400, `invalid manifest: ${problems.map((p) => p.message).join('; ')}`, { extra: { problems } });
    return manifest;
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

  private fromRow(row: Row): AgentRecord {
    const data = JSON.parse(row.data) as Stored;
    return { ...data, id: row.id, name: row.name, createdAt: row.created_at, workspace: this.workspaceOf(row.id) };
  }

  /** A record written or read: replaces the one in memory (records are never changed in place). */
  private put(record: AgentRecord, toml: string): void {
    this.writes++;
    this.agents.set(record.id, record);
    this.toml.set(record.id, toml);
    this.snapshot = undefined;
  }

  private drop(id: string): void {
    this.writes++;
    this.agents.delete(id);
    this.toml.delete(id);
    this.snapshot = undefined;
  }
}

/** What the data column holds: the record minus its columns and derived fields. */
function stored(record: AgentRecord): string {
  const { id: _id, name: _name, createdAt: _created, workspace: _workspace, ...data } = record;
  return JSON.stringify(data);
}

const nameTaken = (name: string) => conflict(`an agent named '${name}' already exists`);

/** The unique name index refused a write (another process took the name first): the same 409 as the check before. */
async function nameUnique<T>(write: Promise<T>, name: string): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (/UNIQUE constraint failed: agents_agents\.name|agents_agents_name_key/i.test((err as Error).message)) throw nameTaken(name);
    throw err;
  }
}

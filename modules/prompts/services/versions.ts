/** Prompt versions: numbered per agent by the server, one active per agent. */
import { createHash, randomUUID } from 'node:crypto';
import { conflict, notFound, requireUuid, type Queries, type Store } from '@talon/module-sdk';
import type { PromptCache } from './cache.ts';

interface Row {
  id: string;
  agent_id: string;
  version: number;
  content_hash: string;
  system_prompt: string;
  tools: string;
  variables: string;
  description: string | null;
  created_at: string;
  created_by: string;
  is_active: number;
}

export type Version = ReturnType<typeof view>;

const view = (r: Row) => ({
  id: r.id,
  agent_id: r.agent_id,
  version: r.version,
  content_hash: r.content_hash,
  system_prompt: r.system_prompt,
  tools: JSON.parse(r.tools) as string[],
  variables: JSON.parse(r.variables) as string[],
  description: r.description,
  created_at: r.created_at,
  created_by: r.created_by,
  is_active: r.is_active === 1,
});

export interface NewVersion {
  system_prompt: string;
  description?: string;
  tools?: string[];
  variables?: string[];
  created_by?: string;
}

export class Versions {
  constructor(
    private readonly store: Store,
    private readonly maxPerAgent: () => number,
    private readonly cache: PromptCache,
  ) {}

  async list(agentId: string): Promise<Version[]> {
    return (await this.store.many<Row>('SELECT * FROM prompts_versions WHERE agent_id = ? ORDER BY version DESC', [agentId])).map(view);
  }

  async get(id: string, q: Queries = this.store): Promise<Version> {
    const row = await q.one<Row>('SELECT * FROM prompts_versions WHERE id = ?', [requireUuid(id, 'prompt version id')]);
    if (!row) throw notFound(`prompt version '${id}' not found`);
    return view(row);
  }

  /** Numbered in its transaction, so two processes saving at once take the next numbers one after the other. */
  save(agentId: string, input: NewVersion): Promise<Version> {
    return this.store.tx(async (t) => {
      const { n, top } = (await t.one<{ n: number; top: number }>(
        'SELECT count(*) AS n, coalesce(max(version), 0) AS top FROM prompts_versions WHERE agent_id = ?',
        [agentId],
      ))!;
      if (n >= this.maxPerAgent())
        throw conflict(`agent has ${n} prompt versions, the most [prompt_intelligence] max_versions_per_agent allows; delete one first`);
      const id = randomUUID();
      await t.run(
        'INSERT INTO prompts_versions (id, agent_id, version, content_hash, system_prompt, tools, variables, description, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
          id,
          agentId,
          top + 1,
          createHash('sha256').update(input.system_prompt).digest('hex'),
          input.system_prompt,
          JSON.stringify(input.tools ?? []),
          JSON.stringify(input.variables ?? []),
          input.description ?? null,
          new Date().toISOString(),
          input.created_by ?? 'api',
        ],
      );
      return this.get(id, t);
    });
  }

  /** Refused while an unfinished experiment uses it; deleting the active one puts the manifest's prompt back. */
  async remove(id: string): Promise<void> {
    const version = await this.store.tx(async (t) => {
      const found = await this.get(id, t);
      const used = await t.one<{ name: string }>(
        `SELECT e.name FROM prompts_variants v JOIN prompts_experiments e ON e.id = v.experiment_id WHERE v.prompt_version_id = ? AND e.status != 'completed' LIMIT 1`,
        [found.id],
      );
      if (used) throw conflict(`prompt version '${id}' is an arm of experiment '${used.name}'; complete the experiment first`);
      await t.run('DELETE FROM prompts_versions WHERE id = ?', [found.id]);
      if (found.is_active) await this.cache.note(found.agent_id, t);
      return found;
    });
    if (version.is_active) await this.cache.reload(version.agent_id);
  }

  async activate(id: string): Promise<Version> {
    const version = await this.store.tx((t) => this.activateIn(t, id));
    await this.cache.reload(version.agent_id);
    return version;
  }

  /** Makes the version its agent's active one, inside the caller's transaction (reload the cache after it). */
  async activateIn(t: Queries, id: string): Promise<Version> {
    const version = await this.get(id, t);
    await t.run('UPDATE prompts_versions SET is_active = 0 WHERE agent_id = ? AND is_active = 1', [version.agent_id]);
    await t.run('UPDATE prompts_versions SET is_active = 1 WHERE id = ?', [version.id]);
    await this.cache.note(version.agent_id, t);
    return this.get(id, t);
  }

  /** The active version's prompt, read on every model call: from the cache. */
  activePrompt(agentId: string): string | undefined {
    return this.cache.activePrompt(agentId);
  }
}

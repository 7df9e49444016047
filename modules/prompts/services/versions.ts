/** Prompt versions: numbered per agent by the server, one active per agent. */
import { createHash, randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { conflict, notFound, prepared, requireUuid } from '@talon/module-sdk';

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
    private readonly db: Database,
    private readonly maxPerAgent: () => number,
  ) {}

  list(agentId: string): Version[] {
    return (prepared(this.db, 'SELECT * FROM prompts_versions WHERE agent_id = ? ORDER BY version DESC').all(agentId) as Row[]).map(view);
  }

  get(id: string): Version {
    const row = prepared(this.db, 'SELECT * FROM prompts_versions WHERE id = ?').get(requireUuid(id, 'prompt version id')) as Row | undefined;
    if (!row) throw notFound(`prompt version '${id}' not found`);
    return view(row);
  }

  save(agentId: string, input: NewVersion): Version {
    return this.db.transaction(() => {
      const { n, top } = prepared(this.db, 'SELECT count(*) AS n, coalesce(max(version), 0) AS top FROM prompts_versions WHERE agent_id = ?').get(agentId) as {
        n: number;
        top: number;
      };
      if (n >= this.maxPerAgent())
        throw conflict(`agent has ${n} prompt versions, the most [prompt_intelligence] max_versions_per_agent allows; delete one first`);
      const id = randomUUID();
      prepared(
        this.db,
        'INSERT INTO prompts_versions (id, agent_id, version, content_hash, system_prompt, tools, variables, description, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ).run(
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
      );
      return this.get(id);
    })();
  }

  /** Refused while an unfinished experiment uses it; deleting the active one puts the manifest's prompt back. */
  remove(id: string): void {
    const version = this.get(id);
    const used = prepared(
      this.db,
      `SELECT e.name FROM prompts_variants v JOIN prompts_experiments e ON e.id = v.experiment_id WHERE v.prompt_version_id = ? AND e.status != 'completed' LIMIT 1`,
    ).get(version.id) as { name: string } | undefined;
    if (used) throw conflict(`prompt version '${id}' is an arm of experiment '${used.name}'; complete the experiment first`);
    prepared(this.db, 'DELETE FROM prompts_versions WHERE id = ?').run(version.id);
  }

  activate(id: string): Version {
    const version = this.get(id);
    this.db.transaction(() => {
      prepared(this.db, 'UPDATE prompts_versions SET is_active = 0 WHERE agent_id = ? AND is_active = 1').run(version.agent_id);
      prepared(this.db, 'UPDATE prompts_versions SET is_active = 1 WHERE id = ?').run(version.id);
    })();
    return this.get(id);
  }

  /** The active version's prompt, read on every model call (one indexed lookup). */
  activePrompt(agentId: string): string | undefined {
    return (
      prepared(this.db, 'SELECT system_prompt FROM prompts_versions WHERE agent_id = ? AND is_active = 1').get(agentId) as { system_prompt: string } | undefined
    )?.system_prompt;
  }

  promptOf(id: string): string | undefined {
    return (prepared(this.db, 'SELECT system_prompt FROM prompts_versions WHERE id = ?').get(id) as { system_prompt: string } | undefined)?.system_prompt;
  }
}

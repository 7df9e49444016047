import { badRequest, type Queries } from '@talon/module-sdk';
import type { KvEntry } from '../api.ts';
import type { Level } from '../config.ts';
import type { EntryStore, HistoryItem, MemoryItem, Removed } from './entries.ts';
import type { KvStore } from './kv.ts';
import type { Relation, RelationInput, RelationStore } from './relations.ts';

export const EXPORT_FORMAT = 'talon-memory/1';

export interface AgentExport {
  format: typeof EXPORT_FORMAT;
  agent_id: string;
  exported_at: string;
  memories: Array<MemoryItem & { history: HistoryItem[] }>;
  relations: Relation[];
  kv_pairs: KvEntry[];
}

export interface ImportedMemory {
  id?: string;
  content: string;
  level?: Level;
  category?: string | null;
  user_id?: string | null;
  session_id?: string | null;
  tags?: string[];
  metadata?: Record<string, unknown>;
  source?: string;
  score?: number;
  access_count?: number;
  created_at?: string;
  updated_at?: string;
  accessed_at?: string;
  expires_at?: string | null;
  history?: Array<{ content: string; tags?: string[]; level?: Level; category?: string | null; changed_at?: string; reason?: string }>;
}

export interface AgentImport {
  memories?: ImportedMemory[];
  relations?: RelationInput[];
  kv_pairs?: KvEntry[];
}

const ms = (value: string | undefined | null, what: string): number | undefined => {
  if (value === undefined || value === null) return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw badRequest(`${what} '${value}' is not an ISO 8601 time`);
  return t;
};

/** Everything the memory module holds for one agent, as JSON, and back. */
export class Transfer {
  constructor(
    private readonly entries: EntryStore,
    private readonly relations: RelationStore,
    private readonly kv: KvStore,
  ) {}

  async export(agentId: string): Promise<AgentExport> {
    const memories: AgentExport['memories'] = [];
    for (const r of await this.entries.agentRows(agentId)) {
      const { current, history } = await this.entries.history(r.id);
      memories.push({ ...current, history });
    }
    return {
      format: EXPORT_FORMAT,
      agent_id: agentId,
      exported_at: new Date(this.entries.now()).toISOString(),
      memories,
      relations: await this.relations.all(agentId),
      kv_pairs: await this.kv.exportAll(agentId),
    };
  }

  /**
   * Adds what the document holds (nothing else is removed). An entry whose id
   * exists for this agent is replaced; an id used by another agent gets a new
   * one. All or nothing: one transaction, validated as it goes.
   */
  async import(agentId: string, doc: AgentImport): Promise<{ memories: number; relations: number; kv_pairs: number }> {
    const { counts, removed } = await this.entries.store.tx(async (t) => {
      const gone: Removed[] = [];
      for (const m of doc.memories ?? []) gone.push(...(await this.importMemory(t, agentId, m)));
      // The imported entries count against the agent's cap like any other (the least important go).
      for (const id of await this.entries.evict(agentId, undefined, t)) gone.push({ id, agent_id: agentId });
      for (const r of doc.relations ?? []) await this.relations.upsert(agentId, r, t);
      const kv = await this.kv.importAll(agentId, doc.kv_pairs ?? [], t);
      return { counts: { memories: doc.memories?.length ?? 0, relations: doc.relations?.length ?? 0, kv_pairs: kv }, removed: gone };
    });
    this.entries.forgotten(removed);
    return counts;
  }

  /** One imported entry with its history; answers the entry it replaced, if any. */
  private async importMemory(t: Queries, agentId: string, m: ImportedMemory): Promise<Removed[]> {
    const existing = m.id === undefined ? undefined : await this.entries.row(m.id, t);
    const replaced = existing && existing.agent_id === agentId ? await this.entries.remove(existing.id, t) : undefined;
    const row = await this.entries.insert(
      {
        id: existing && existing.agent_id !== agentId ? undefined : m.id,
        content: m.content,
        agentId,
        userId: m.user_id,
        sessionId: m.session_id,
        level: m.level,
        category: m.category,
        tags: m.tags,
        metadata: m.metadata,
        source: m.source ?? 'import',
        score: m.score,
        accessCount: m.access_count,
        createdAt: ms(m.created_at, 'created_at'),
        updatedAt: ms(m.updated_at, 'updated_at'),
        accessedAt: ms(m.accessed_at, 'accessed_at'),
        expiresAt: ms(m.expires_at, 'expires_at'),
      },
      t,
    );
    for (const h of m.history ?? []) {
      await t.run('INSERT INTO memory_history (memory_id, content, tags, level, category, changed_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        row.id,
        h.content,
        JSON.stringify(h.tags ?? []),
        h.level ?? row.level,
        h.category ?? null,
        ms(h.changed_at, 'changed_at') ?? row.created_at,
        h.reason ?? 'import',
      ]);
    }
    return replaced ? [replaced] : [];
  }
}

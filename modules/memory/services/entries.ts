import { randomUUID } from 'node:crypto';
import { badRequest, lockInTransaction, notFound, payloadTooLarge, type Queries, type SqlValue, type Store } from '@talon/module-sdk';
import type { Level, MemoryConfig } from '../config.ts';
import type { MemoryChange } from '../api.ts';
import { jsonHas, jsonList } from './sql.ts';

/** A row of memory_entries. */
export interface EntryRow {
  seq: number;
  id: string;
  agent_id: string | null;
  user_id: string | null;
  session_id: string | null;
  level: Level;
  category: string | null;
  source: string;
  content: string;
  tags: string;
  metadata: string;
  score: number;
  access_count: number;
  created_at: number;
  updated_at: number;
  accessed_at: number;
  decayed_at: number;
  expires_at: number | null;
}

/** A proactive memory entry as the API shows it. */
export interface MemoryItem {
  id: string;
  content: string;
  level: Level;
  category: string | null;
  agent_id: string | null;
  user_id: string | null;
  session_id: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  source: string;
  score: number;
  access_count: number;
  created_at: string;
  updated_at: string;
  accessed_at: string;
  expires_at: string | null;
}

export interface HistoryItem {
  content: string;
  tags: string[];
  level: Level;
  category: string | null;
  changed_at: string;
  reason: string;
}

export interface NewEntry {
  content: string;
  agentId?: string | null;
  userId?: string | null;
  sessionId?: string | null;
  level?: Level;
  category?: string | null;
  tags?: string[];
  metadata?: Record<string, unknown>;
  source?: string;
  expiresAt?: number | null;
}

export interface EntryPatch {
  content?: string;
  tags?: string[];
  level?: Level;
  category?: string | null;
  metadata?: Record<string, unknown>;
  expiresAt?: number | null;
}

export interface ListFilter {
  agentId?: string;
  userId?: string;
  level?: Level;
  category?: string;
  tag?: string;
}

const iso = (ms: number) => new Date(ms).toISOString();
const DAY_MS = 86_400_000;

export function toItem(row: EntryRow): MemoryItem {
  return {
    id: row.id,
    content: row.content,
    level: row.level,
    category: row.category,
    agent_id: row.agent_id,
    user_id: row.user_id,
    session_id: row.session_id,
    tags: JSON.parse(row.tags) as string[],
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    source: row.source,
    score: Math.round(row.score * 1e6) / 1e6,
    access_count: row.access_count,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    accessed_at: iso(row.accessed_at),
    expires_at: row.expires_at === null ? null : iso(row.expires_at),
  };
}

/**
 * The score multiplier for one decay step (reference behaviour): entries that
 * were recalled often decay slower, by up to 4x.
 */
export function decayFactor(rate: number, days: number, accessCount: number): number {
  const boost = Math.min(1 + Math.log2(Math.max(accessCount, 1)), 4);
  return Math.exp((-rate / boost) * days);
}

/** What a removal found: the entry's agent (null for an entry of none). */
export interface Removed {
  id: string;
  agent_id: string | null;
}

/**
 * Proactive memory entries: storage, edit history, levels, decay and cleanup.
 * `now` is injectable so decay can be tested over simulated time. Methods that other services compose into one
 * transaction take the transaction's `t` as their last argument (the store itself otherwise).
 */
export class EntryStore {
  constructor(
    readonly store: Store,
    private readonly config: () => MemoryConfig,
    readonly now: () => number = Date.now,
    /** Called after content changes, so the embedding queue can (re)embed. */
    private readonly onChange: () => void = () => undefined,
    /** Told after an agent's entry is added or deleted (memory.updated on the bus). */
    private readonly changed: (change: MemoryChange) => void = () => undefined,
  ) {}

  private checkContent(content: string): string {
    const text = content.trim();
    if (!text) throw badRequest('content must not be empty');
    const max = this.config().max_content_bytes;
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > max) throw payloadTooLarge(`content is ${bytes} bytes; the limit is ${max}`);
    return text;
  }

  async add(input: NewEntry): Promise<MemoryItem> {
    const { row, evicted } = await this.store.tx(async (t) => {
      const inserted = await this.insert(input, t);
      return { row: inserted, evicted: inserted.agent_id ? await this.evict(inserted.agent_id, inserted.seq, t) : [] };
    });
    this.onChange();
    if (row.agent_id) {
      this.forgotten(evicted.map((id) => ({ id, agent_id: row.agent_id })));
      this.changed({ agentId: row.agent_id, operation: 'remember', memoryId: row.id });
    }
    return toItem(row);
  }

  /** Publishes memory.updated 'forget' for entries removed in a transaction, once it committed. */
  forgotten(removed: readonly Removed[]): void {
    for (const r of removed) if (r.agent_id) this.changed({ agentId: r.agent_id, operation: 'forget', memoryId: r.id });
  }

  /**
   * The per-agent cap (max_entries_per_agent): past it, the least important entries go — lowest score (decay lowers
   * it, recall slows that), then least recently recalled, then oldest. `keep` (the entry just stored) never goes.
   * Returns the ids evicted (the caller publishes them with forgotten() after its commit).
   */
  async evict(agentId: string, keep: number | undefined, q: Queries = this.store): Promise<string[]> {
    const cap = this.config().max_entries_per_agent;
    if (!cap) return [];
    // Writers of one agent's entries count and evict in turn: otherwise, on PostgreSQL, two at once each miss the
    // other's new entry and together leave the agent over its cap.
    await lockInTransaction(q, `memory:cap:${agentId}`);
    const count = (await q.one<{ n: number }>('SELECT COUNT(*) AS n FROM memory_entries WHERE agent_id = ?', [agentId]))!.n;
    if (count <= cap) return [];
    const gone = await q.many<{ id: string }>(
      `DELETE FROM memory_entries WHERE seq IN (SELECT seq FROM memory_entries WHERE agent_id = ? AND seq != ?
         ORDER BY score ASC, accessed_at ASC, seq ASC LIMIT ?) RETURNING id`,
      [agentId, keep ?? -1, count - cap],
    );
    return gone.map((r) => r.id);
  }

  /** Inserts one entry (no queue kick); `id` and times may be given by imports. */
  async insert(
    input: NewEntry & { id?: string; createdAt?: number; updatedAt?: number; accessedAt?: number; score?: number; accessCount?: number },
    q: Queries = this.store,
  ): Promise<EntryRow> {
    const content = this.checkContent(input.content);
    const now = this.now();
    const created = input.createdAt ?? now;
    const row = await q.one<EntryRow>(
      `INSERT INTO memory_entries (id, agent_id, user_id, session_id, level, category, source, content, tags, metadata, score, access_count,
           created_at, updated_at, accessed_at, decayed_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      [
        input.id ?? randomUUID(),
        input.agentId ?? null,
        input.userId ?? null,
        input.sessionId ?? null,
        input.level ?? 'session',
        input.category ?? null,
        input.source ?? 'api',
        content,
        JSON.stringify(uniqueTags(input.tags)),
        JSON.stringify(input.metadata ?? {}),
        input.score ?? 1,
        input.accessCount ?? 0,
        created,
        input.updatedAt ?? created,
        input.accessedAt ?? created,
        Math.max(created, input.accessedAt ?? created),
        input.expiresAt ?? null,
      ],
    );
    return row!;
  }

  row(id: string, q: Queries = this.store): Promise<EntryRow | undefined> {
    return q.one<EntryRow>('SELECT * FROM memory_entries WHERE id = ?', [id]);
  }

  /** 404 naming the id when absent. */
  async require(id: string, q: Queries = this.store): Promise<EntryRow> {
    const row = await this.row(id, q);
    if (!row) throw notFound(`memory '${id}' not found`);
    return row;
  }

  async rowsBySeq(seqs: number[], q: Queries = this.store): Promise<EntryRow[]> {
    if (!seqs.length) return [];
    return q.many<EntryRow>(`SELECT * FROM memory_entries WHERE seq IN ${jsonList(q, 'integer')}`, [JSON.stringify(seqs)]);
  }

  /** Updates an entry; the previous version goes to the history. Read and written in one transaction. */
  async update(id: string, patch: EntryPatch, reason = 'update'): Promise<MemoryItem> {
    const newTags = patch.tags === undefined ? undefined : JSON.stringify(uniqueTags(patch.tags));
    const now = this.now();
    const { row, edited } = await this.store.tx(async (t) => {
      const old = await this.require(id, t);
      const content = patch.content === undefined ? old.content : this.checkContent(patch.content);
      await t.run('INSERT INTO memory_history (memory_id, content, tags, level, category, changed_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        id,
        old.content,
        old.tags,
        old.level,
        old.category,
        now,
        reason,
      ]);
      if (content !== old.content) await t.run('DELETE FROM memory_embeddings WHERE entry_seq = ?', [old.seq]);
      const updated = await t.one<EntryRow>(
        'UPDATE memory_entries SET content = ?, tags = ?, level = ?, category = ?, metadata = ?, expires_at = ?, updated_at = ? WHERE id = ? RETURNING *',
        [
          content,
          newTags ?? old.tags,
          patch.level ?? old.level,
          patch.category === undefined ? old.category : patch.category,
          patch.metadata === undefined ? old.metadata : JSON.stringify(patch.metadata),
          patch.expiresAt === undefined ? old.expires_at : patch.expiresAt,
          now,
          id,
        ],
      );
      return { row: updated!, edited: content !== old.content };
    });
    if (edited) this.onChange();
    return toItem(row);
  }

  async history(id: string): Promise<{ id: string; current: MemoryItem; history: HistoryItem[] }> {
    const current = toItem(await this.require(id));
    const rows = await this.store.many<{ content: string; tags: string; level: Level; category: string | null; changed_at: number; reason: string }>(
      'SELECT content, tags, level, category, changed_at, reason FROM memory_history WHERE memory_id = ? ORDER BY id',
      [id],
    );
    return { id, current, history: rows.map((r) => ({ ...r, tags: JSON.parse(r.tags) as string[], changed_at: iso(r.changed_at) })) };
  }

  /** Removes one entry inside a caller's transaction; undefined when there was none (publish with forgotten()). */
  async remove(id: string, q: Queries): Promise<Removed | undefined> {
    const row = await q.one<{ agent_id: string | null }>('DELETE FROM memory_entries WHERE id = ? RETURNING agent_id', [id]);
    return row && { id, agent_id: row.agent_id };
  }

  async delete(id: string): Promise<boolean> {
    const removed = await this.remove(id, this.store);
    if (removed) this.forgotten([removed]);
    return removed !== undefined;
  }

  async bulkDelete(ids: string[]): Promise<{ deleted: number; failed: string[]; total: number }> {
    const failed: string[] = [];
    const removed = await this.store.tx(async (t) => {
      const gone: Removed[] = [];
      for (const id of ids) {
        const r = await this.remove(id, t);
        if (r) gone.push(r);
        else failed.push(id);
      }
      return gone;
    });
    this.forgotten(removed);
    return { deleted: removed.length, failed, total: ids.length };
  }

  async deleteWhere(agentId: string, level?: Level): Promise<number> {
    const { changes } = level
      ? await this.store.run('DELETE FROM memory_entries WHERE agent_id = ? AND level = ?', [agentId, level])
      : await this.store.run('DELETE FROM memory_entries WHERE agent_id = ?', [agentId]);
    return changes;
  }

  async list(filter: ListFilter, page: { limit: number; offset: number }): Promise<{ items: MemoryItem[]; total: number }> {
    const { where, args } = filterSql(this.store, filter);
    const total = (await this.store.one<{ n: number }>(`SELECT COUNT(*) AS n FROM memory_entries ${where}`, args))!.n;
    const rows = await this.store.many<EntryRow>(`SELECT * FROM memory_entries ${where} ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?`, [
      ...args,
      page.limit,
      page.offset,
    ]);
    return { items: rows.map(toItem), total };
  }

  /** Every entry of an agent, oldest first (export, duplicates). */
  agentRows(agentId: string): Promise<EntryRow[]> {
    return this.store.many<EntryRow>('SELECT * FROM memory_entries WHERE agent_id = ? ORDER BY seq', [agentId]);
  }

  async countByLevel(agentId?: string): Promise<{ count: number; by_level: Record<Level, number> }> {
    const { where, args } = filterSql(this.store, { agentId });
    const rows = await this.store.many<{ level: Level; n: number }>(`SELECT level, COUNT(*) AS n FROM memory_entries ${where} GROUP BY level`, args);
    const by_level: Record<Level, number> = { user: 0, session: 0, agent: 0 };
    for (const r of rows) by_level[r.level] = Number(r.n);
    return { count: by_level.user + by_level.session + by_level.agent, by_level };
  }

  async stats(agentId?: string, embeddingModel?: string) {
    const { where, args } = filterSql(this.store, { agentId });
    const agg = (await this.store.one<{
      avg: number | null;
      oldest: number | null;
      newest: number | null;
      agents: number;
      users: number;
      categories: number;
    }>(
      `SELECT AVG(score) AS avg, MIN(created_at) AS oldest, MAX(created_at) AS newest, COUNT(DISTINCT agent_id) AS agents,
           COUNT(DISTINCT user_id) AS users, COUNT(DISTINCT category) AS categories FROM memory_entries ${where}`,
      args,
    ))!;
    const embedded =
      embeddingModel === undefined
        ? 0
        : (await this.store.one<{ n: number }>(
            `SELECT COUNT(*) AS n FROM memory_entries JOIN memory_embeddings m ON m.entry_seq = memory_entries.seq AND m.model = ? ${where}`,
            [embeddingModel, ...args],
          ))!.n;
    const relations = agentId
      ? (await this.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM memory_relations WHERE agent_id = ?', [agentId]))!.n
      : (await this.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM memory_relations'))!.n;
    const counts = await this.countByLevel(agentId);
    return {
      total: counts.count,
      by_level: counts.by_level,
      agents: agg.agents,
      users: agg.users,
      categories: agg.categories,
      average_score: agg.avg === null ? null : Math.round(agg.avg * 1e4) / 1e4,
      oldest: agg.oldest === null ? null : iso(agg.oldest),
      newest: agg.newest === null ? null : iso(agg.newest),
      relations,
      embedded,
      pending_embeddings: embeddingModel === undefined ? 0 : counts.count - embedded,
    };
  }

  /** Marks entries as recalled: newer accessed_at, higher access_count (slower decay). */
  async touch(ids: string[]): Promise<void> {
    if (!ids.length) return;
    await this.store.run(`UPDATE memory_entries SET accessed_at = ?, access_count = access_count + 1 WHERE id IN ${jsonList(this.store, 'text')}`, [
      this.now(),
      JSON.stringify(ids),
    ]);
  }

  /**
   * Applies time decay up to the start of the current period. Each entry
   * decays for the time since max(last decay, last access), so applying twice
   * in one period changes nothing and the result does not depend on how
   * often it runs.
   */
  async decay(): Promise<{ decayed: number; decay_rate: number; period_hours: number; applied_until: string }> {
    const { decay_rate: rate, decay_period_hours: hours } = this.config();
    const period = hours * 3_600_000;
    const until = Math.floor(this.now() / period) * period;
    // One statement (the engine's math functions), so 100k entries never pass through JS: the same formula as decayFactor().
    const { changes: decayed } = await this.store.run(
      this.store.pick({
        sqlite: `UPDATE memory_entries
         SET score = min(1.0, max(0.0, score * exp(-(? / min(1.0 + log2(max(access_count, 1)), 4.0)) * ((? - max(decayed_at, accessed_at)) / ?)))),
             decayed_at = ?
         WHERE decayed_at < ? AND accessed_at < ?`,
        postgres: `UPDATE memory_entries
         SET score = LEAST(1.0, GREATEST(0.0, score * exp(-(?::float8 / LEAST(1.0 + log(2.0, GREATEST(access_count, 1)::numeric)::float8, 4.0))
               * ((?::float8 - GREATEST(decayed_at, accessed_at)) / ?::float8)))),
             decayed_at = ?
         WHERE decayed_at < ? AND accessed_at < ?`,
      }),
      [rate, until, DAY_MS, until, until, until],
    );
    return { decayed, decay_rate: rate, period_hours: hours, applied_until: iso(until) };
  }

  /** Removes expired entries (expires_at passed; session entries idle past session_ttl_hours) and, when asked, stale ones. */
  async cleanup(options: { stale: boolean }): Promise<{ removed: number; expired: number; stale: number }> {
    const cfg = this.config();
    const now = this.now();
    return this.store.tx(async (t) => {
      const expired =
        (await t.run('DELETE FROM memory_entries WHERE expires_at IS NOT NULL AND expires_at <= ?', [now])).changes +
        (await t.run("DELETE FROM memory_entries WHERE level = 'session' AND accessed_at < ?", [now - cfg.session_ttl_hours * 3_600_000])).changes;
      const stale = options.stale ? (await t.run("DELETE FROM memory_entries WHERE level != 'user' AND score < ?", [cfg.stale_score])).changes : 0;
      return { removed: expired + stale, expired, stale };
    });
  }
}

function uniqueTags(tags: string[] | undefined): string[] {
  return [...new Set((tags ?? []).map((t) => t.trim()).filter(Boolean))];
}

function filterSql(q: Queries, filter: ListFilter): { where: string; args: SqlValue[] } {
  const parts: string[] = [];
  const args: SqlValue[] = [];
  if (filter.agentId !== undefined) (parts.push('agent_id = ?'), args.push(filter.agentId));
  if (filter.userId !== undefined) (parts.push('user_id = ?'), args.push(filter.userId));
  if (filter.level !== undefined) (parts.push('level = ?'), args.push(filter.level));
  if (filter.category !== undefined) (parts.push('category = ?'), args.push(filter.category));
  if (filter.tag !== undefined) (parts.push(jsonHas(q, 'memory_entries.tags')), args.push(filter.tag));
  return { where: parts.length ? `WHERE ${parts.join(' AND ')}` : '', args };
}

export const checkLevel = (value: string): Level => {
  if (value === 'user' || value === 'session' || value === 'agent') return value;
  throw badRequest(`invalid memory level '${value}'; expected user, session or agent`);
};

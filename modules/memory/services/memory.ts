import type { Logger } from 'pino';
import type { ChangeFeed, Store } from '@talon/module-sdk';
import type { MemoryChange, RecallHit, SemanticMemory } from '../api.ts';
import type { LlmService } from '@talon/llm';
import { checkLevel, EntryStore } from './entries.ts';
import { KvStore } from './kv.ts';
import { VectorIndex } from './vectors.ts';
import { Searcher, type QueryVector, type SearchHit, type SearchOptions } from './search.ts';
import { Consolidator } from './consolidate.ts';
import { RelationStore } from './relations.ts';
import { Transfer } from './transfer.ts';
import { EmbeddingQueue } from './embed-queue.ts';
import { detectEmbeddingProvider, Embedder, resolveEmbeddingTarget, type EmbeddingTarget } from './embedder.ts';
import type { MemoryConfig } from '../config.ts';

export interface MemoryDeps {
  store: Store;
  log: Logger;
  config: () => MemoryConfig;
  llm?: () => LlmService | undefined;
  now?: () => number;
  /** Runs background work soon (ctx.setTimeout in the module, which tracks its promise; setImmediate elsewhere). */
  schedule?: (fn: () => Promise<void>) => void;
  /** Told after each write of an agent's key or entry (the module publishes memory.updated). */
  changed?: (change: MemoryChange) => void;
  /** Notes to and from the other processes on the database (ctx.changes); a unit test with one process needs none. */
  feed?: ChangeFeed;
}

/** The change-feed topic of the vec0 tables: key = the dimension of a table just created. */
export const VEC_TABLES = 'vec-tables';

const QUERY_CACHE = 256;

/** The memory module's services, wired together. */
export class Memory implements SemanticMemory {
  readonly kv: KvStore;
  readonly entries: EntryStore;
  readonly vectors: VectorIndex;
  readonly searcher: Searcher;
  readonly consolidator: Consolidator;
  readonly relations: RelationStore;
  readonly transfer: Transfer;
  readonly queue: EmbeddingQueue;
  private readonly embedder = new Embedder();
  private readonly queryCache = new Map<string, Float32Array>();
  private targetCache?: { key: string; target: EmbeddingTarget | undefined };

  constructor(private readonly deps: MemoryDeps) {
    const now = deps.now ?? Date.now;
    const { store, feed } = deps;
    this.vectors = new VectorIndex(store, deps.log, async (dim) => feed?.note(VEC_TABLES, String(dim)));
    feed?.on(VEC_TABLES, (dim) => this.vectors.learn(Number(dim)));
    this.queue = new EmbeddingQueue(
      store,
      this.vectors,
      () => this.embeddingTarget(),
      this.embedder,
      deps.log,
      deps.schedule ?? ((fn) => void setImmediate(fn)),
    );
    this.kv = new KvStore(store, deps.config, now, deps.changed);
    this.entries = new EntryStore(store, deps.config, now, () => this.queue.kick(), deps.changed);
    this.searcher = new Searcher(store, this.entries, this.vectors);
    this.consolidator = new Consolidator(store, this.entries, this.vectors);
    this.relations = new RelationStore(store, now);
    this.transfer = new Transfer(this.entries, this.relations, this.kv);
  }

  /** What needs the database before the first request: sqlite-vec and its tables (the module's start()). */
  init(): Promise<void> {
    return this.vectors.init();
  }

  /** The embedding endpoint for the current config (re-resolved when the config changes). */
  embeddingTarget(): EmbeddingTarget | undefined {
    const c = this.deps.config();
    // With "auto" the environment decides: a key set later (POST /api/providers/{name}/key) is picked up.
    const detected = c.embedding_provider.trim() === 'auto' ? detectEmbeddingProvider()?.provider : '';
    const key = `${c.embedding_provider}\u0000${detected}\u0000${c.embedding_model}\u0000${c.embedding_api_key_env}`;
    if (this.targetCache?.key !== key) {
      this.targetCache = { key, target: resolveEmbeddingTarget(c, this.deps.llm?.(), this.deps.log) };
      this.queryCache.clear();
    }
    return this.targetCache.target;
  }

  consolidate(agentId: string): Promise<{ merged_count: number; groups: Array<{ kept: string; merged: string[] }> }> {
    return this.consolidator.consolidate(agentId, this.deps.config().duplicate_threshold, this.embeddingTarget()?.model);
  }

  /** "fts5+vector" when vectors are computed, else why not. */
  embeddingStatus(): string {
    if (!this.embeddingTarget()) return 'fts5 only — no embedding provider configured';
    if (!this.vectors.available) return 'fts5 only — sqlite-vec unavailable';
    return 'fts5+vector';
  }

  async stats(agentId?: string) {
    const target = this.vectors.available ? this.embeddingTarget() : undefined;
    return {
      ...(await this.entries.stats(agentId, target?.model)),
      kv_pairs: await this.kv.count(agentId),
      embedding_status: this.embeddingStatus(),
      embedding_model: target?.model ?? null,
    };
  }

  /** The query's embedding, or undefined (no provider, or the call failed: search falls back to FTS5). */
  private async queryVector(query: string): Promise<QueryVector | undefined> {
    const target = this.vectors.available ? this.embeddingTarget() : undefined;
    if (!target || !query.trim()) return undefined;
    let vector = this.queryCache.get(query);
    if (!vector) {
      try {
        [vector] = await this.embedder.embed(target, [query], { timeoutMs: 5000, retries: 0 });
      } catch (err) {
        this.deps.log.warn({ err: (err as Error).message }, 'query embedding failed; searching with FTS5 only');
        return undefined;
      }
      if (this.queryCache.size >= QUERY_CACHE) this.queryCache.delete(this.queryCache.keys().next().value!);
      this.queryCache.set(query, vector);
    }
    return { model: target.model, vector };
  }

  async searchHits(query: string, options: SearchOptions): Promise<{ hits: SearchHit[]; mode: string }> {
    const pending = this.queryVector(query);
    // When the query goes to the embedding provider, let the request leave first and do the BM25 pass while it is out.
    if (this.embeddingTarget() && !this.queryCache.has(query)) await new Promise((resolve) => setImmediate(resolve));
    const text = await this.searcher.textPass(query, options);
    const qv = await pending;
    return { hits: await this.searcher.finish(text, options, qv), mode: qv ? 'hybrid' : 'fts5' };
  }

  /** SemanticMemory.search: used by the agent loop and tools, so hits count as recalled. */
  async search(query: string, options: { agentId?: string; limit?: number; sessionId?: string }): Promise<RecallHit[]> {
    const { hits } = await this.searchHits(query, { agentId: options.agentId, sessionId: options.sessionId, limit: options.limit ?? 10 });
    await this.entries.touch(hits.map((h) => h.id));
    return hits.map((h) => ({ id: h.id, content: h.content, relevance: h.relevance, level: h.level, category: h.category }));
  }

  async add(entry: {
    content: string;
    agentId?: string;
    userId?: string;
    tags?: string[];
    level?: string;
    sessionId?: string;
    category?: string;
    source?: string;
  }): Promise<{ id: string }> {
    const item = await this.entries.add({ ...entry, level: entry.level === undefined ? undefined : checkLevel(entry.level) });
    return { id: item.id };
  }

  stop(): void {
    this.queue.stop();
  }
}

import type { Queries, SqlValue, Store } from '@talon/module-sdk';
import type { Level } from '../config.ts';
import { toItem, type EntryRow, type EntryStore, type MemoryItem } from './entries.ts';
import { coverage, ftsQuery, keywords } from './text.ts';
import { cosine, type VectorIndex } from './vectors.ts';
import { jsonList } from './sql.ts';

export interface SearchOptions {
  agentId?: string;
  userId?: string;
  level?: Level;
  /** Session-level entries of other sessions are left out when set. */
  sessionId?: string;
  limit: number;
}

export interface SearchHit extends MemoryItem {
  /** How well the entry matches the query, 0..1 (text and vector similarity). */
  relevance: number;
  /** The ranking key: relevance blended with the entry's score and recency. */
  rank: number;
}

export interface TextPass {
  words: string[];
  /** Entry seq → BM25 score (higher is better). */
  text: Map<number, number>;
}

export interface QueryVector {
  model: string;
  vector: Float32Array;
}

const DAY_MS = 86_400_000;
/** Corpus size from which very common query words are left out of the FTS5 query. */
const PRUNE_FROM = 2000;
/** A word in more than this share of entries barely changes BM25 order but costs a scan of its whole posting list. */
const COMMON_SHARE = 0.05;
const MAX_TERMS = 8;
const DF_TTL_MS = 300_000;

/**
 * The full-text statements: FTS5 (memory_fts, BM25) on SQLite; on PostgreSQL the content_tsv column (english
 * configuration, GIN index) ranked by ts_rank_cd, negated so that lower is better as BM25 is. `match` is the engine's
 * query text (matchText).
 */
const FTS = {
  docFreq: {
    sqlite: 'SELECT COUNT(*) AS n FROM memory_fts WHERE memory_fts MATCH ?',
    postgres: "SELECT COUNT(*) AS n FROM memory_entries WHERE content_tsv @@ websearch_to_tsquery('english', ?)",
  },
  ranked: {
    sqlite: 'SELECT rowid AS seq, bm25(memory_fts) AS bm FROM memory_fts WHERE memory_fts MATCH ? ORDER BY bm LIMIT ?',
    postgres: `SELECT seq, -ts_rank_cd(content_tsv, query) AS bm FROM memory_entries, websearch_to_tsquery('english', ?) AS query
      WHERE content_tsv @@ query ORDER BY bm, seq DESC LIMIT ?`,
  },
  /** With the filters (`where`, each part starting with AND, on `e.`). */
  rankedWhere: (where: string) => ({
    sqlite: `SELECT e.seq AS seq, bm25(memory_fts) AS bm FROM memory_fts JOIN memory_entries e ON e.seq = memory_fts.rowid
      WHERE memory_fts MATCH ? ${where} ORDER BY bm LIMIT ?`,
    postgres: `SELECT e.seq AS seq, -ts_rank_cd(e.content_tsv, query) AS bm FROM memory_entries e, websearch_to_tsquery('english', ?) AS query
      WHERE e.content_tsv @@ query ${where} ORDER BY bm, e.seq DESC LIMIT ?`,
  }),
};

/** The query text for the engine: an FTS5 OR expression, or websearch_to_tsquery's "a or b". */
const matchText = (q: Queries, words: string[]) => q.pick({ sqlite: ftsQuery(words), postgres: words.join(' or ') });

/**
 * Hybrid search: BM25 candidates from FTS5 plus nearest neighbours from the
 * vector index, merged and re-ranked. Text relevance is BM25 relative to the
 * best hit, tempered by the share of query words present; vector relevance is
 * the exact cosine of the full-precision vectors. Entries with a vector weigh
 * both (0.4 text, 0.6 vector); the others use text alone.
 */
export class Searcher {
  private readonly df = new Map<string, { n: number; at: number }>();
  private total?: { n: number; at: number };

  constructor(
    private readonly store: Store,
    private readonly entries: EntryStore,
    private readonly vectors: VectorIndex,
  ) {}

  /** Entries containing the word (cached for a few minutes: it only steers which words are searched). */
  private async docFreq(word: string, now: number): Promise<number> {
    const hit = this.df.get(word);
    if (hit && now - hit.at < DF_TTL_MS) return hit.n;
    const n = (await this.store.one<{ n: number }>(this.store.pick(FTS.docFreq), [matchText(this.store, [word])]))!.n;
    if (this.df.size > 10_000) this.df.clear();
    this.df.set(word, { n, at: now });
    return n;
  }

  /**
   * The words worth an FTS5 lookup: in a large corpus, words found in more
   * than 5% of entries are dropped (the two rarest always stay), and at most
   * the 8 rarest are kept.
   */
  private async searchTerms(words: string[]): Promise<string[]> {
    const now = Date.now();
    if (!this.total || now - this.total.at > DF_TTL_MS)
      this.total = { n: (await this.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM memory_entries'))!.n, at: now };
    if (this.total.n < PRUNE_FROM) return words.slice(0, MAX_TERMS * 2);
    const ranked: Array<{ w: string; n: number }> = [];
    for (const w of words) ranked.push({ w, n: await this.docFreq(w, now) });
    const limit = this.total.n * COMMON_SHARE;
    return ranked
      .filter((x) => x.n > 0)
      .sort((a, b) => a.n - b.n)
      .filter((x, i) => i < 2 || x.n <= limit)
      .slice(0, MAX_TERMS)
      .map((x) => x.w);
  }

  /**
   * BM25 candidates. Ranking the FTS5 matches alone is several times cheaper
   * than joining every match with its entry to filter, so the filters are
   * checked on an oversized unfiltered top list first; only when too few of it
   * pass (other agents' entries crowd it) the exact filtered query runs.
   */
  private async textCandidates(match: string, options: SearchOptions, pool: number): Promise<Array<{ seq: number; bm: number }>> {
    const { where, args } = filters(options, 'e.');
    const plain = await this.store.many<{ seq: number; bm: number }>(this.store.pick(FTS.ranked), [match, where ? pool * 2 : pool]);
    if (!where || !plain.length) return plain;
    const rows = await this.store.many<FilterRow>(
      `SELECT seq, agent_id, user_id, level, session_id FROM memory_entries WHERE seq IN ${jsonList(this.store, 'integer')}`,
      [JSON.stringify(plain.map((r) => r.seq))],
    );
    const passing = new Set(rows.filter((row) => matches(row, options)).map((row) => row.seq));
    if (passing.size >= pool || plain.length < pool * 2) return plain.filter((r) => passing.has(r.seq));
    return this.store.many<{ seq: number; bm: number }>(this.store.pick(FTS.rankedWhere(where)), [match, ...args, pool]);
  }

  async search(query: string, options: SearchOptions, queryVector?: QueryVector): Promise<SearchHit[]> {
    return this.finish(await this.textPass(query, options), options, queryVector);
  }

  /** The BM25 part, which needs no query vector (so it can run while the query is being embedded). */
  async textPass(query: string, options: SearchOptions): Promise<TextPass> {
    const words = keywords(query);
    const pool = Math.max(options.limit * 4, 40);
    const text = new Map<number, number>();
    const terms = words.length ? await this.searchTerms(words) : [];
    if (terms.length) for (const r of await this.textCandidates(matchText(this.store, terms), options, pool)) text.set(r.seq, -r.bm);
    return { words, text };
  }

  /** Adds the vector candidates, scores everything and keeps the best `limit`. */
  async finish({ words, text }: TextPass, options: SearchOptions, queryVector?: QueryVector): Promise<SearchHit[]> {
    const vecSim = new Map<number, number>();
    if (queryVector) {
      // Binary KNN cost grows quickly with k (sqlite-vec keeps a sorted top-k per chunk), so the coarse pass
      // asks for about `limit`; FTS5 candidates are re-ranked by exact cosine as well.
      const coarse = await this.vectors.nearest(queryVector.vector, Math.min(Math.max(options.limit, 10), 32), options.agentId);
      const all = [...new Set([...coarse, ...text.keys()])];
      for (const [seq, v] of await this.vectors.vectors(all, queryVector.model)) vecSim.set(seq, Math.max(0, cosine(queryVector.vector, v)));
    }
    const seqs = [...new Set([...text.keys(), ...vecSim.keys()])];
    if (!seqs.length) return [];
    const best = Math.max(0, ...text.values()) || 1;
    const now = this.entries.now();
    const scored: Array<{ row: EntryRow; relevance: number; rank: number }> = [];
    for (const row of await this.entries.rowsBySeq(seqs)) {
      if (!matches(row, options)) continue;
      const bm = text.get(row.seq);
      const t = bm === undefined ? 0 : (bm / best) * (0.5 + 0.5 * coverage(words, row.content));
      const v = vecSim.get(row.seq);
      const relevance = v === undefined ? t : 0.4 * t + 0.6 * v;
      if (relevance < 0.05) continue;
      const recency = Math.exp(-(now - Math.max(row.updated_at, row.accessed_at)) / (30 * DAY_MS));
      scored.push({ row, relevance: round(relevance), rank: round(relevance * (0.75 + 0.2 * row.score + 0.05 * recency)) });
    }
    scored.sort((a, b) => b.rank - a.rank || b.row.seq - a.row.seq);
    return scored.slice(0, options.limit).map((s) => ({ ...toItem(s.row), relevance: s.relevance, rank: s.rank }));
  }
}

function filters(options: SearchOptions, prefix: string): { where: string; args: SqlValue[] } {
  const parts: string[] = [];
  const args: SqlValue[] = [];
  if (options.agentId !== undefined) (parts.push(`${prefix}agent_id = ?`), args.push(options.agentId));
  if (options.userId !== undefined) (parts.push(`${prefix}user_id = ?`), args.push(options.userId));
  if (options.level !== undefined) (parts.push(`${prefix}level = ?`), args.push(options.level));
  if (options.sessionId !== undefined)
    (parts.push(`(${prefix}level != 'session' OR ${prefix}session_id IS NULL OR ${prefix}session_id = ?)`), args.push(options.sessionId));
  return { where: parts.map((p) => `AND ${p}`).join(' '), args };
}

type FilterRow = Pick<EntryRow, 'seq' | 'agent_id' | 'user_id' | 'level' | 'session_id'>;

/** The filters in JS, for candidates found without them (vector index: agent only; the unfiltered BM25 pass). */
function matches(row: FilterRow, o: SearchOptions): boolean {
  if (o.agentId !== undefined && row.agent_id !== o.agentId) return false;
  if (o.userId !== undefined && row.user_id !== o.userId) return false;
  if (o.level !== undefined && row.level !== o.level) return false;
  if (o.sessionId !== undefined && row.level === 'session' && row.session_id !== null && row.session_id !== o.sessionId) return false;
  return true;
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

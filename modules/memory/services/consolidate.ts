import { lockInTransaction, type Queries, type Store } from '@talon/module-sdk';
import type { EntryRow, EntryStore, Removed } from './entries.ts';
import { jaccard, wordSet } from './text.ts';
import { cosine, type VectorIndex } from './vectors.ts';

/** At most this many recent entries of an agent are compared (pairwise work grows with the square). */
const MAX_CANDIDATES = 2000;

export interface DuplicateGroup {
  keep: { id: string; content: string };
  duplicates: Array<{ id: string; content: string; similarity: number }>;
}

/**
 * Near-duplicate detection and merging. Similarity is the cosine of the
 * embeddings when both entries have one, else the Jaccard index of their word
 * sets. Entries are only compared within one level.
 */
export class Consolidator {
  constructor(
    private readonly store: Store,
    private readonly entries: EntryStore,
    private readonly vectors: VectorIndex,
  ) {}

  async groups(
    agentId: string,
    threshold: number,
    model?: string,
    q: Queries = this.store,
  ): Promise<Array<{ keep: EntryRow; members: Array<{ row: EntryRow; similarity: number }> }>> {
    const rows = await q.many<EntryRow>('SELECT * FROM (SELECT * FROM memory_entries WHERE agent_id = ? ORDER BY seq DESC LIMIT ?) AS recent ORDER BY seq', [
      agentId,
      MAX_CANDIDATES,
    ]);
    const vecs = model
      ? await this.vectors.vectors(
          rows.map((r) => r.seq),
          model,
          q,
        )
      : new Map<number, Float32Array>();
    const words = new Map(rows.map((r) => [r.seq, wordSet(r.content)]));
    const similarity = (a: EntryRow, b: EntryRow) => {
      const va = vecs.get(a.seq);
      const vb = vecs.get(b.seq);
      return va && vb ? cosine(va, vb) : jaccard(words.get(a.seq)!, words.get(b.seq)!);
    };
    const groups: Array<{ first: EntryRow; members: Array<{ row: EntryRow; similarity: number }> }> = [];
    for (const row of rows) {
      let placed = false;
      for (const g of groups) {
        if (g.first.level !== row.level) continue;
        const s = similarity(g.first, row);
        if (s >= threshold) {
          g.members.push({ row, similarity: s });
          placed = true;
          break;
        }
      }
      if (!placed) groups.push({ first: row, members: [] });
    }
    // Keep the most recently used entry of each group; the others merge into it.
    return groups
      .filter((g) => g.members.length)
      .map((g) => {
        const all = [{ row: g.first, similarity: 1 }, ...g.members];
        const keep = all.reduce((a, b) =>
          b.row.accessed_at > a.row.accessed_at || (b.row.accessed_at === a.row.accessed_at && b.row.seq > a.row.seq) ? b : a,
        ).row;
        const members = all
          .filter((m) => m.row.seq !== keep.seq)
          .map((m) => ({ row: m.row, similarity: round(m.row === g.first ? similarity(keep, g.first) : similarity(keep, m.row)) }));
        return { keep, members };
      });
  }

  async duplicates(agentId: string, threshold: number, model?: string): Promise<DuplicateGroup[]> {
    return (await this.groups(agentId, threshold, model)).map((g) => ({
      keep: { id: g.keep.id, content: g.keep.content },
      duplicates: g.members.map((m) => ({ id: m.row.id, content: m.row.content, similarity: m.similarity })),
    }));
  }

  /**
   * Merges each group into its kept entry: the merged entries' texts go into
   * the keeper's history (reason 'consolidated', their own histories too), tags
   * are united, access counts summed, the best score kept; the others are deleted.
   * The groups are found and merged in one transaction, so two processes consolidating one agent (a scheduled run
   * here, a manual one there) never merge from rows the other already changed. SQLite runs one write transaction at a
   * time; on PostgreSQL, where two would read the same rows at once, the transaction first takes a lock of its own
   * on the agent's consolidation (released at its end), so the second reads what the first committed.
   */
  async consolidate(
    agentId: string,
    threshold: number,
    model?: string,
  ): Promise<{ consolidated: true; merged_count: number; groups: Array<{ kept: string; merged: string[] }> }> {
    const now = this.entries.now();
    const { groups, removed } = await this.store.tx(async (t) => {
      await lockInTransaction(t, `memory:consolidate:${agentId}`);
      const found = await this.groups(agentId, threshold, model, t);
      const gone: Removed[] = [];
      for (const g of found) gone.push(...(await this.merge(t, g, now)));
      return { groups: found, removed: gone };
    });
    this.entries.forgotten(removed);
    return {
      consolidated: true,
      merged_count: removed.length,
      groups: groups.map((g) => ({ kept: g.keep.id, merged: g.members.map((m) => m.row.id) })),
    };
  }

  /** One group into its keeper, inside the consolidation's transaction; answers the entries removed. */
  private async merge(t: Queries, g: { keep: EntryRow; members: Array<{ row: EntryRow }> }, now: number): Promise<Removed[]> {
    const tags = new Set<string>(JSON.parse(g.keep.tags) as string[]);
    let accessCount = g.keep.access_count;
    let score = g.keep.score;
    const removed: Removed[] = [];
    for (const { row } of g.members) {
      await t.run('UPDATE memory_history SET memory_id = ? WHERE memory_id = ?', [g.keep.id, row.id]);
      await t.run('INSERT INTO memory_history (memory_id, content, tags, level, category, changed_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        g.keep.id,
        row.content,
        row.tags,
        row.level,
        row.category,
        now,
        `consolidated from ${row.id}`,
      ]);
      for (const tag of JSON.parse(row.tags) as string[]) tags.add(tag);
      accessCount += row.access_count;
      score = Math.max(score, row.score);
      const gone = await this.entries.remove(row.id, t);
      if (gone) removed.push(gone);
    }
    await t.run('UPDATE memory_entries SET tags = ?, access_count = ?, score = ?, updated_at = ? WHERE seq = ?', [
      JSON.stringify([...tags]),
      accessCount,
      score,
      now,
      g.keep.seq,
    ]);
    return removed;
  }
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

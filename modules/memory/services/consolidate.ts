import type { Database } from 'better-sqlite3';
import { statements } from '@talon/module-sdk';
import type { EntryRow, EntryStore } from './entries.ts';
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
    private readonly db: Database,
    private readonly entries: EntryStore,
    private readonly vectors: VectorIndex,
  ) {
    this.prepare = statements(db);
  }

  private readonly prepare: ReturnType<typeof statements>;

  groups(agentId: string, threshold: number, model?: string): Array<{ keep: EntryRow; members: Array<{ row: EntryRow; similarity: number }> }> {
    const rows = this.prepare<[string, number], EntryRow>(
      'SELECT * FROM (SELECT * FROM memory_entries WHERE agent_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq',
    ).all(agentId, MAX_CANDIDATES);
    const vecs = model
      ? this.vectors.vectors(
          rows.map((r) => r.seq),
          model,
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

  duplicates(agentId: string, threshold: number, model?: string): DuplicateGroup[] {
    return this.groups(agentId, threshold, model).map((g) => ({
      keep: { id: g.keep.id, content: g.keep.content },
      duplicates: g.members.map((m) => ({ id: m.row.id, content: m.row.content, similarity: m.similarity })),
    }));
  }

  /**
   * Merges each group into its kept entry: the merged entries' texts go into
   * the keeper's history (reason 'consolidated', their own histories too), tags
   * are united, access counts summed, the best score kept; the others are deleted.
   */
  consolidate(
    agentId: string,
    threshold: number,
    model?: string,
  ): { consolidated: true; merged_count: number; groups: Array<{ kept: string; merged: string[] }> } {
    const groups = this.groups(agentId, threshold, model);
    const now = this.entries.now();
    let merged = 0;
    this.db.transaction(() => {
      const moveHistory = this.prepare('UPDATE memory_history SET memory_id = ? WHERE memory_id = ?');
      const addHistory = this.prepare(
        'INSERT INTO memory_history (memory_id, content, tags, level, category, changed_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)',
      );
      for (const g of groups) {
        const tags = new Set<string>(JSON.parse(g.keep.tags) as string[]);
        let accessCount = g.keep.access_count;
        let score = g.keep.score;
        for (const { row } of g.members) {
          moveHistory.run(g.keep.id, row.id);
          addHistory.run(g.keep.id, row.content, row.tags, row.level, row.category, now, `consolidated from ${row.id}`);
          for (const t of JSON.parse(row.tags) as string[]) tags.add(t);
          accessCount += row.access_count;
          score = Math.max(score, row.score);
          this.entries.delete(row.id);
          merged++;
        }
        this.db
          .prepare('UPDATE memory_entries SET tags = ?, access_count = ?, score = ?, updated_at = ? WHERE seq = ?')
          .run(JSON.stringify([...tags]), accessCount, score, now, g.keep.seq);
      }
    })();
    return { consolidated: true, merged_count: merged, groups: groups.map((g) => ({ kept: g.keep.id, merged: g.members.map((m) => m.row.id) })) };
  }
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

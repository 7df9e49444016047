/**
 * Evolution history, use counts and origins, in the service's store (they outlive the folders being rewritten).
 * Origins are held in memory (every skill load reads one); a change is noted (topic ORIGINS) and the other processes
 * of the home read them again. Uses are counted behind the tool call that made them.
 */
import { lockInTransaction, WriteBehind, type ChangeFeed, type Store } from '@talon/module-sdk';
import type { SkillOrigin, SkillVersion } from '@talon/skills';

/** The newest versions shown in a detail. */
const SHOWN = 10;

export const ORIGINS = 'origins';

/** A version to record when its content differs from the last one recorded for the skill. */
export interface VersionRecord {
  name: string;
  version: string;
  contentHash: string;
  changelog: string;
}

export class SkillHistory {
  private origins = new Map<string, SkillOrigin>();
  private readonly uses: WriteBehind<string>;

  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
    onUsesLost: (err: unknown, uses: number) => void,
  ) {
    this.uses = new WriteBehind<string>(
      store,
      (t, name) =>
        t.run('INSERT INTO skills_usage (name, use_count) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET use_count = skills_usage.use_count + 1', [name]),
      (err, names) => onUsesLost(err, names.length),
    );
  }

  /** Reads the origins (start, and when another process installed or uninstalled a skill). */
  async load(): Promise<void> {
    const rows = await this.store.many<{ name: string; origin: string }>('SELECT name, origin FROM skills_origins');
    this.origins = new Map(rows.map((r) => [r.name, JSON.parse(r.origin) as SkillOrigin]));
  }

  /**
   * Records each version whose content hash differs from the last one recorded for its skill, in one transaction
   * (loading a thousand skills: one commit). The comparison is part of the insert, so two processes loading the same
   * change record it once (SQLite's write lock runs their transactions one after the other; on PostgreSQL, where both
   * would find no row under read committed, a lock held to the commit does). Answers how many were recorded.
   */
  async record(versions: readonly VersionRecord[]): Promise<number> {
    if (!versions.length) return 0;
    const at = new Date().toISOString();
    return this.store.tx(async (t) => {
      await lockInTransaction(t, 'skills:versions');
      let recorded = 0;
      for (const v of versions) {
        const { changes } = await t.run(
          `INSERT INTO skills_versions (name, version, timestamp, changelog, content_hash)
           SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS (
             SELECT 1 FROM skills_versions WHERE name = ? AND content_hash = ? AND seq = (SELECT MAX(seq) FROM skills_versions WHERE name = ?))`,
          [v.name, v.version, at, v.changelog, v.contentHash, v.name, v.contentHash, v.name],
        );
        recorded += changes;
      }
      return recorded;
    });
  }

  async evolution(name: string): Promise<{ versions: SkillVersion[]; use_count: number; evolution_count: number }> {
    const versions = await this.store.many<SkillVersion>(
      'SELECT version, timestamp, changelog, content_hash FROM skills_versions WHERE name = ? ORDER BY seq DESC LIMIT ?',
      [name, SHOWN],
    );
    const count = await this.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM skills_versions WHERE name = ?', [name]);
    return { versions: versions.reverse(), use_count: await this.useCount(name), evolution_count: count?.n ?? 0 };
  }

  /** Uses as stored, this process's pending ones included. */
  async useCount(name: string): Promise<number> {
    await this.uses.flush();
    return (await this.store.one<{ use_count: number }>('SELECT use_count FROM skills_usage WHERE name = ?', [name]))?.use_count ?? 0;
  }

  used(name: string): void {
    this.uses.push(name);
  }

  origin(name: string): SkillOrigin | undefined {
    return this.origins.get(name);
  }

  async setOrigin(name: string, origin: SkillOrigin): Promise<void> {
    await this.store.tx(async (t) => {
      await t.run(
        'INSERT INTO skills_origins (name, origin, installed_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET origin = excluded.origin, installed_at = excluded.installed_at',
        [name, JSON.stringify(origin), new Date().toISOString()],
      );
      await this.changes.note(ORIGINS, name, t);
    });
    this.origins.set(name, origin);
  }

  /** An uninstalled skill keeps its history (a reinstall continues it); its origin goes. */
  async forgetOrigin(name: string): Promise<void> {
    await this.store.tx(async (t) => {
      await t.run('DELETE FROM skills_origins WHERE name = ?', [name]);
      await this.changes.note(ORIGINS, name, t);
    });
    this.origins.delete(name);
  }

  /** Writes the pending use counts (the module stops). */
  flush(): Promise<void> {
    return this.uses.flush();
  }
}

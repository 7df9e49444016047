/** Evolution history, use counts and origins, in SQLite (they outlive the folders being rewritten). */
import type { Database } from 'better-sqlite3';
import { prepared } from '@talon/module-sdk';
import type { SkillOrigin, SkillVersion } from '@talon/skills';

/** The newest versions shown in a detail. */
const SHOWN = 10;

export class SkillHistory {
  constructor(private readonly db: Database) {}

  /** Runs fn in one transaction (loading a thousand skills records a thousand versions: one commit, not a thousand). */
  batch<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /** Records a version when the content hash differs from the last one recorded; true when it did. */
  record(name: string, version: string, contentHash: string, changelog: string): boolean {
    const last = prepared(this.db, 'SELECT content_hash FROM skills_versions WHERE name = ? ORDER BY seq DESC LIMIT 1').get(name) as
      { content_hash: string } | undefined;
    if (last?.content_hash === contentHash) return false;
    prepared(this.db, 'INSERT INTO skills_versions (name, version, timestamp, changelog, content_hash) VALUES (?, ?, ?, ?, ?)').run(
      name,
      version,
      new Date().toISOString(),
      changelog,
      contentHash,
    );
    return true;
  }

  evolution(name: string): { versions: SkillVersion[]; use_count: number; evolution_count: number } {
    const versions = prepared(this.db, 'SELECT version, timestamp, changelog, content_hash FROM skills_versions WHERE name = ? ORDER BY seq DESC LIMIT ?').all(
      name,
      SHOWN,
    ) as SkillVersion[];
    const count = prepared(this.db, 'SELECT COUNT(*) AS n FROM skills_versions WHERE name = ?').get(name) as { n: number };
    return { versions: versions.reverse(), use_count: this.useCount(name), evolution_count: count.n };
  }

  useCount(name: string): number {
    return (prepared(this.db, 'SELECT use_count FROM skills_usage WHERE name = ?').get(name) as { use_count: number } | undefined)?.use_count ?? 0;
  }

  used(name: string): void {
    prepared(this.db, 'INSERT INTO skills_usage (name, use_count) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET use_count = use_count + 1').run(name);
  }

  origin(name: string): SkillOrigin | undefined {
    const row = prepared(this.db, 'SELECT origin FROM skills_origins WHERE name = ?').get(name) as { origin: string } | undefined;
    return row ? (JSON.parse(row.origin) as SkillOrigin) : undefined;
  }

  setOrigin(name: string, origin: SkillOrigin): void {
    prepared(this.db, 'INSERT OR REPLACE INTO skills_origins (name, origin, installed_at) VALUES (?, ?, ?)').run(
      name,
      JSON.stringify(origin),
      new Date().toISOString(),
    );
  }

  /** An uninstalled skill keeps its history (a reinstall continues it); its origin goes. */
  forgetOrigin(name: string): void {
    prepared(this.db, 'DELETE FROM skills_origins WHERE name = ?').run(name);
  }
}

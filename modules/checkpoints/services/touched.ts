import type { Database, Statement } from 'better-sqlite3';

/**
 * The files each working directory's shadow repository tracks: every path a
 * file_write or apply_patch call touched (table checkpoints_paths). A path is
 * recorded before its snapshot runs, so a failed snapshot leaves it pending
 * and the next one picks it up.
 */
export class TouchedPaths {
  private readonly insert: Statement<[string, string, string]>;
  private readonly select: Statement<[string], { path: string }>;

  constructor(private readonly db: Database) {
    this.insert = db.prepare('INSERT OR IGNORE INTO checkpoints_paths (work_dir, path, first_seen) VALUES (?, ?, ?)');
    this.select = db.prepare('SELECT path FROM checkpoints_paths WHERE work_dir = ? ORDER BY path');
  }

  record(workDir: string, paths: readonly string[]): void {
    const now = new Date().toISOString();
    this.db.transaction(() => {
      for (const p of paths) this.insert.run(workDir, p, now);
    })();
  }

  list(workDir: string): string[] {
    return this.select.all(workDir).map((row) => row.path);
  }
}

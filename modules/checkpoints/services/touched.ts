import type { Store } from '@talon/module-sdk';

/**
 * The files each working directory's shadow repository tracks: every path a
 * file_write or apply_patch call touched (table checkpoints_paths). A path is
 * recorded before its snapshot runs, so a failed snapshot leaves it pending
 * and the next one picks it up.
 */
export class TouchedPaths {
  constructor(private readonly store: Store) {}

  async record(workDir: string, paths: readonly string[]): Promise<void> {
    const now = new Date().toISOString();
    await this.store.tx(async (t) => {
      // The first sighting stays (another process may have recorded the path first).
      for (const p of paths)
        await t.run('INSERT INTO checkpoints_paths (work_dir, path, first_seen) VALUES (?, ?, ?) ON CONFLICT (work_dir, path) DO NOTHING', [workDir, p, now]);
    });
  }

  async list(workDir: string): Promise<string[]> {
    return (await this.store.many<{ path: string }>('SELECT path FROM checkpoints_paths WHERE work_dir = ? ORDER BY path', [workDir])).map((row) => row.path);
  }
}

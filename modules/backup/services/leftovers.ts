/**
 * The work files of a backup or restore in progress (a database snapshot, a restore's staging folder, an archive being
 * written) carry the id of the node that made them. Processes on one home, or the nodes of a fleet sharing a data
 * directory, then remove only what a process that is gone left behind, never the work another one is doing.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** `snapshot-<node>-<uuid>` or `restore-<node>-<uuid>`; a name of an older version has no node. */
const WORK_FOLDER = new RegExp(`^(?:snapshot|restore)-(?:(${UUID})-${UUID}|${UUID})$`);
/** `<archive>.<node>.partial`, or `<archive>.partial` from an older version. */
const PARTIAL = new RegExp(`^.+?(?:\\.(${UUID}))?\\.partial$`);

/** A folder in the module's data directory for a snapshot or a restore's staging, owned by `node`. */
export function workFolder(dataDir: string, kind: 'snapshot' | 'restore', node: string): string {
  return path.join(dataDir, `${kind}-${node}-${randomUUID()}`);
}

/** Where an archive is written before it is renamed into place. */
export function partialFile(archive: string, node: string): string {
  return `${archive}.${node}.partial`;
}

/**
 * Removes the work files whose owner `gone` says is gone (undefined: made by an older version, before owners were
 * named); answers the names removed.
 */
export function removeLeftovers(dirs: { dataDir: string; backupsDir: string }, gone: (owner: string | undefined) => boolean): string[] {
  const removed: string[] = [];
  const sweep = (dir: string, pattern: RegExp) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const match = pattern.exec(name);
      if (!match || !gone(match[1])) continue;
      rmSync(path.join(dir, name), { recursive: true, force: true });
      removed.push(name);
    }
  };
  sweep(dirs.dataDir, WORK_FOLDER);
  sweep(dirs.backupsDir, PARTIAL);
  return removed;
}

import { lstatSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { SimpleGit } from 'simple-git';
import { shadowGit, type ShadowLocation } from './git.ts';
import { ensureRepo } from './shadow.ts';
import { checkpointMessage, type CheckpointMeta } from './message.ts';
import type { IndexMirror } from './index-mirror.ts';

export interface SnapshotOptions {
  maxFileBytes: number;
  log: Logger;
  signal: AbortSignal;
  index: IndexMirror;
}

/**
 * Commits the current state of the given paths (relative to the working
 * directory) to the shadow repository. Only these paths ever enter its
 * index, never the rest of the user's folder. Returns the new commit id, or
 * null when nothing changed since the last checkpoint.
 *
 * Usually one git call: `commit -a` records changes and deletions of files
 * the index already holds; `update-index` runs first only for files new to
 * the index and for files that must leave it (over the size limit, no longer
 * a regular file).
 */
export async function takeSnapshot(location: ShadowLocation, paths: readonly string[], meta: CheckpointMeta, options: SnapshotOptions): Promise<string | null> {
  const state = await ensureRepo(location, options.signal);
  const git = shadowGit(location, options.signal);
  const tracked = await options.index.load(git, location.gitDir, state === 'created');
  const { add, drop, missing } = classify(location.workDir, paths, tracked, options);
  await addPaths(git, location.workDir, add, drop, options.log);
  if (drop.length) await git.raw(['update-index', '--verbose', '--force-remove', '--', ...drop]);
  add.forEach((p) => tracked.add(p));
  drop.forEach((p) => tracked.delete(p));
  const commit = await commitAll(git, checkpointMessage(meta));
  missing.forEach((p) => tracked.delete(p));
  if (add.length || drop.length || missing.length) options.index.changed(location.gitDir);
  if (commit) options.log.debug({ workDir: location.workDir, commit, tool: meta.tool }, 'checkpoint committed');
  return commit;
}

/**
 * Sorts the touched paths by what the index must do with them: files (and
 * symlinks) new to it are added; tracked paths over the size limit or no
 * longer a file are dropped, so a checkpoint never holds a stale copy of
 * something it does not track; tracked files that are gone are recorded as
 * deleted by the commit. Tracked files that exist need nothing here.
 */
function classify(workDir: string, paths: readonly string[], tracked: ReadonlySet<string>, options: SnapshotOptions) {
  const add: string[] = [];
  const drop: string[] = [];
  const missing: string[] = [];
  for (const relative of paths) {
    let stats;
    try {
      stats = lstatSync(path.join(workDir, relative));
    } catch {
      if (tracked.has(relative)) missing.push(relative);
      continue;
    }
    if (stats.isSymbolicLink() || (stats.isFile() && stats.size <= options.maxFileBytes)) {
      if (!tracked.has(relative)) add.push(relative);
      continue;
    }
    if (stats.isFile())
      options.log.debug({ workDir, path: relative, bytes: stats.size, limit: options.maxFileBytes }, 'file over the checkpoint size limit not committed');
    if (tracked.has(relative)) drop.push(relative);
  }
  return { add, drop, missing };
}

/** Adds files new to the index; one that git cannot process (behind a symlinked folder, unreadable) is moved to `drop` instead of holding back the others. */
async function addPaths(git: SimpleGit, workDir: string, add: string[], drop: string[], log: Logger): Promise<void> {
  let pending = add;
  while (pending.length) {
    try {
      // update-index skips names git cannot hold (".git" parts...) with a notice.
      await git.raw(['update-index', '--verbose', '--add', '--', ...pending]);
      return;
    } catch (err) {
      const refused = /Unable to process path (.+)$/m.exec((err as Error).message)?.[1];
      if (refused === undefined || !pending.includes(refused)) throw err;
      log.debug({ workDir, path: refused, reason: (err as Error).message.split('\n')[0] }, 'path not checkpointed: git cannot process it');
      pending = pending.filter((p) => p !== refused);
      add.splice(add.indexOf(refused), 1);
      drop.push(refused);
    }
  }
}

/**
 * `commit -a`: stages changes and deletions of every path the index holds
 * (all of them touched paths) and commits; null when nothing changed. With
 * --untracked-files=no "nothing to commit" costs no scan of the user's
 * folder; that case exits 1 with its status on stdout and an empty stderr,
 * which simple-git returns as output. The `[branch <id>]` line gives the id.
 */
async function commitAll(git: SimpleGit, message: string): Promise<string | null> {
  const output = await git.raw(['-c', 'core.abbrev=40', 'commit', '--all', '--no-verify', '--untracked-files=no', '--cleanup=whitespace', '-m', message]);
  const id = /^\[[^\]]*\b([0-9a-f]{40})\]/m.exec(output)?.[1];
  if (id) return id;
  if (/nothing to commit|no changes added to commit/.test(output)) return null;
  throw new Error(`git commit gave no commit id: ${output.slice(0, 500)}`);
}

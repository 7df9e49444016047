import { lstatSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { SimpleGit } from 'simple-git';
import { shadowGit, type ShadowLocation } from './git.ts';
import { ensureRepo } from './shadow.ts';
import { checkpointMessage, type CheckpointMeta } from './message.ts';

export interface SnapshotOptions {
  maxFileBytes: number;
  log: Logger;
  signal: AbortSignal;
}

/**
 * Commits the current state of the given paths (relative to the working
 * directory) to the shadow repository. Only these paths are ever staged,
 * never the rest of the user's folder. Returns the new commit id, or null
 * when nothing changed since the last checkpoint.
 */
export async function takeSnapshot(location: ShadowLocation, paths: readonly string[], meta: CheckpointMeta, options: SnapshotOptions): Promise<string | null> {
  await ensureRepo(location, options.signal);
  const git = shadowGit(location, options.signal);
  await stage(git, location.workDir, paths, options);
  const commit = await commitStaged(git, checkpointMessage(meta));
  if (commit) options.log.debug({ workDir: location.workDir, commit, tool: meta.tool }, 'checkpoint committed');
  return commit;
}

/**
 * Commits the index; null when it equals HEAD. One git call: with
 * --untracked-files=no, "nothing to commit" costs no scan of the user's
 * folder. (A commit with nothing to do exits 1 with its status on stdout and
 * an empty stderr, which simple-git returns as output, not as an error.)
 */
async function commitStaged(git: SimpleGit, message: string): Promise<string | null> {
  const output = await git.raw(['-c', 'core.abbrev=40', 'commit', '--no-verify', '--untracked-files=no', '--cleanup=whitespace', '-m', message]);
  const id = /^\[[^\]]*\b([0-9a-f]{40})\]/m.exec(output)?.[1];
  if (id) return id;
  if (/nothing to commit|no changes added to commit/.test(output)) return null;
  throw new Error(`git commit gave no commit id: ${output.slice(0, 500)}`);
}

/**
 * Brings the index in line with the working tree for these paths: files
 * (and symlinks) are added or updated, missing ones removed; files over the
 * size limit, folders and special files are dropped from the index, so a
 * checkpoint never holds a stale copy of something it does not track.
 */
async function stage(git: SimpleGit, workDir: string, paths: readonly string[], options: SnapshotOptions): Promise<void> {
  const update: string[] = [];
  const drop: string[] = [];
  for (const relative of paths) {
    let stats;
    try {
      stats = lstatSync(path.join(workDir, relative));
    } catch {
      update.push(relative); // gone: update-index --remove records the deletion
      continue;
    }
    if (stats.isSymbolicLink() || (stats.isFile() && stats.size <= options.maxFileBytes)) {
      update.push(relative);
    } else {
      if (stats.isFile()) options.log.debug({ workDir, path: relative, bytes: stats.size, limit: options.maxFileBytes }, 'file over the checkpoint size limit not committed');
      drop.push(relative);
    }
  }
  let pending = update;
  while (pending.length) {
    try {
      // update-index skips names git cannot hold (".git" parts...) with a notice; unchanged files are not re-read.
      await git.raw(['update-index', '--verbose', '--add', '--remove', '--', ...pending]);
      break;
    } catch (err) {
      // One path git cannot process (behind a symlinked folder, unreadable) must not hold back the others.
      const refused = /Unable to process path (.+)$/m.exec((err as Error).message)?.[1];
      if (refused === undefined || !pending.includes(refused)) throw err;
      options.log.debug({ workDir, path: refused, reason: (err as Error).message.split('\n')[0] }, 'path not checkpointed: git cannot process it');
      pending = pending.filter((p) => p !== refused);
      drop.push(refused);
    }
  }
  if (drop.length) await git.raw(['update-index', '--verbose', '--force-remove', '--', ...drop]);
}

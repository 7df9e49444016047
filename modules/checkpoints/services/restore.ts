import { mkdirSync } from 'node:fs';
import { badRequest, notFound } from '@talon/module-sdk';
import type { SimpleGit } from 'simple-git';
import { shadowGit, type ShadowLocation } from './git.ts';
import { repoExists } from './shadow.ts';
import { takeSnapshot, type SnapshotOptions } from './snapshot.ts';

/** The reply of POST /api/checkpoints/restore (docs/checkpoints.md). */
export interface RestoreResult {
  status: 'restored';
  working_dir: string;
  /** Full id of the restored commit. */
  commit: string;
  /** Paths (relative to working_dir) written back: every file of that commit. */
  restored: string[];
  /** Commit holding the state of those paths just before the restore; null when it equalled the last checkpoint. */
  safety_snapshot: string | null;
}

/**
 * Copies the files of a checkpoint back into the working directory: files
 * that existed at snapshot time are overwritten, files created later stay
 * (`checkout <commit> -- <its paths>`; HEAD does not move). A safety snapshot
 * of those paths comes first, so a restore can itself be undone.
 * `commit` is already validated as 4 to 40 hex characters.
 */
export async function restoreCheckpoint(location: ShadowLocation, commit: string, options: SnapshotOptions): Promise<RestoreResult> {
  if (!repoExists(location)) throw notFound(`no checkpoints for working directory '${location.workDir}'`);
  const git = shadowGit(location, options.signal);
  const full = await resolveCommit(git, commit.toLowerCase());
  if (!full) throw notFound(`no checkpoint '${commit}' for working directory '${location.workDir}'`);
  const listing = await git.raw(['ls-tree', '-r', '-z', '--name-only', full]);
  const paths = listing.split('\0').filter(Boolean);
  const safety = await takeSnapshot(location, paths, { tool: 'restore', paths, restoreOf: full }, options);
  if (paths.length) {
    mkdirSync(location.workDir, { recursive: true });
    // ':(top)' = every path of the commit; literal pathspecs are switched off for this one magic word.
    await git.raw(['--no-literal-pathspecs', 'checkout', full, '--', ':(top)']);
    const tracked = await options.index.load(git, location.gitDir, false);
    paths.forEach((p) => tracked.add(p));
    options.index.changed(location.gitDir);
  }
  return { status: 'restored', working_dir: location.workDir, commit: full, restored: paths, safety_snapshot: safety };
}

/** Full id of a commit named by a full or abbreviated id; null when there is none. */
export async function resolveCommit(git: SimpleGit, id: string): Promise<string | null> {
  try {
    const full = (await git.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `${id}^{commit}`])).trim();
    return full || null;
  } catch (err) {
    const message = (err as Error).message;
    if (/ambiguous/.test(message)) throw badRequest(`commit '${id}' is ambiguous: give more characters`);
    // The id names a tree or a blob: no checkpoint.
    if (/expected commit type/.test(message)) return null;
    throw err;
  }
}

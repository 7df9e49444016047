import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { shadowGit, type ShadowLocation } from './git.ts';

/** The spec's folder name: first 16 hex chars of SHA-256 of the absolute path (UTF-8, no trailing slash). */
export function shadowName(workDir: string): string {
  return createHash('sha256').update(workDir, 'utf8').digest('hex').slice(0, 16);
}

/**
 * The canonical form of a working directory: absolute, no trailing slash,
 * symlinks resolved when it exists (so a path and a symlink to it share one
 * shadow repository; a folder that does not exist keeps its resolved form).
 */
export function canonicalDir(dir: string): string {
  const absolute = path.resolve(dir);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/** Where the shadow repository of a working directory lives under the checkpoints root. */
export function locate(root: string, workDir: string): ShadowLocation {
  return { gitDir: path.join(root, shadowName(workDir)), workDir, emptyDir: path.join(root, '.empty') };
}

/** A repository exists once `git init` wrote HEAD. */
export function repoExists(location: ShadowLocation): boolean {
  return existsSync(path.join(location.gitDir, 'HEAD'));
}

/**
 * Creates the shadow repository if needed (and says whether it did); git internals sit directly in
 * gitDir (no .git subfolder). It is initialised in a scratch folder and
 * renamed into place, so a git killed halfway never leaves a half-made
 * repository that later snapshots would trip over.
 */
export async function ensureRepo(location: ShadowLocation, signal: AbortSignal): Promise<'existing' | 'created'> {
  if (repoExists(location)) {
    clearStaleLock(location);
    return 'existing';
  }
  mkdirSync(location.emptyDir, { recursive: true });
  const scratch = mkdtempSync(path.join(path.dirname(location.gitDir), '.init-'));
  try {
    await shadowGit({ ...location, gitDir: scratch }, signal).raw(['init', `--template=${location.emptyDir}`]);
    renameSync(scratch, location.gitDir);
    return 'created';
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Every git call on a shadow repository goes through its serial queue, so an
 * index.lock found before a call is a leftover of a killed or crashed git
 * (git removes its locks on SIGTERM, not on SIGKILL or power loss). Left in
 * place it would fail every later snapshot.
 */
function clearStaleLock(location: ShadowLocation): void {
  rmSync(path.join(location.gitDir, 'index.lock'), { force: true });
}

import { notFound } from '@talon/module-sdk';
import { shadowGit, type ShadowLocation } from './git.ts';
import { repoExists } from './shadow.ts';
import { LOG_FORMAT, parseLog, type CheckpointEntry } from './message.ts';

/** The checkpoints of a working directory, newest first (read-only: never creates a repository). */
export async function listCheckpoints(location: ShadowLocation, page: { limit: number; offset: number }): Promise<CheckpointEntry[]> {
  if (!repoExists(location)) throw notFound(`no checkpoints for working directory '${location.workDir}'`);
  const git = shadowGit(location);
  const head = (await git.raw(['rev-parse', '--verify', '--quiet', 'HEAD'])).trim();
  if (!head) return [];
  const output = await git.raw(['log', `--format=${LOG_FORMAT}`, `--skip=${page.offset}`, `--max-count=${page.limit}`, head]);
  return parseLog(output);
}

/**
 * Retention of one shadow repository: keep the newest `maxCount` checkpoints and those younger than `maxAgeDays`
 * (the newest one always stays). The oldest kept commit becomes the repository's shallow boundary (git's own
 * mechanism for a history cut short: it counts as a root, its parents as absent), and the commits and files only
 * older checkpoints referenced are pruned. Kept checkpoints keep their ids.
 */
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { shadowGit, type ShadowLocation } from './git.ts';
import { repoExists } from './shadow.ts';

export interface RetentionPolicy {
  /** Checkpoints kept per working directory; 0 = no limit. */
  maxCount: number;
  /** Checkpoints older than this are dropped; 0 = no limit. */
  maxAgeDays: number;
}

const DAY_MS = 86_400_000;

/** How many commits the policy keeps of a history listed newest first (commit times in seconds). */
export function keptCount(times: readonly number[], policy: RetentionPolicy, now: number): number {
  let keep = policy.maxCount > 0 ? Math.min(times.length, policy.maxCount) : times.length;
  if (policy.maxAgeDays > 0) {
    const cutoff = (now - policy.maxAgeDays * DAY_MS) / 1000;
    while (keep > 1 && times[keep - 1] < cutoff) keep--;
  }
  return keep;
}

/** Applies the policy; resolves with the number of checkpoints dropped. */
export async function applyRetention(location: ShadowLocation, policy: RetentionPolicy, now: number, signal?: AbortSignal): Promise<number> {
  if ((!policy.maxCount && !policy.maxAgeDays) || !repoExists(location)) return 0;
  const git = shadowGit(location, signal);
  const head = (await git.raw(['rev-parse', '--verify', '--quiet', 'HEAD']).catch(() => '')).trim();
  if (!head) return 0;
  const history = (await git.raw(['log', '--format=%H %ct', head]))
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' '));
  const keep = keptCount(
    history.map(([, time]) => Number(time)),
    policy,
    now,
  );
  if (keep >= history.length) return 0;
  const boundary = history[keep - 1][0];
  const shallow = path.join(location.gitDir, 'shallow');
  writeFileSync(`${shallow}.tmp`, `${boundary}\n`);
  renameSync(`${shallow}.tmp`, shallow);
  // Reflog entries would keep the dropped commits reachable.
  await git.raw(['reflog', 'expire', '--expire=now', '--all']);
  await git.raw(['prune', '--expire=now']);
  return history.length - keep;
}

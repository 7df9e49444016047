import { notFound } from '@talon/module-sdk';
import { shadowGit, type ShadowLocation } from './git.ts';
import { repoExists } from './shadow.ts';
import { LOG_FORMAT, parseLog, type CheckpointEntry } from './message.ts';
import { resolveCommit } from './restore.ts';

/** A file a checkpoint changed against the checkpoint before it. */
export interface CheckpointChange {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'type_changed';
  /** Lines added and removed; null for a binary file. */
  additions: number | null;
  deletions: number | null;
}

/** The reply of GET /api/checkpoints/{commit} (docs/checkpoints.md). */
export interface CheckpointDetail extends CheckpointEntry {
  working_dir: string;
  /** The checkpoint before it; null for the first one kept (retention cuts history there). */
  parent: string | null;
  /** What changed since the parent (against an empty tree for the first one kept). */
  changes: CheckpointChange[];
  /** Every file the checkpoint holds: what a restore writes back. */
  files: string[];
  /** The unified diff of `changes`, as git prints it (plain text, cut at DIFF_MAX_CHARS). */
  diff: string;
  diff_truncated: boolean;
}

/** A diff is shown to a person: past this it is cut (a repository's files are 50 KB at most each, but there may be many). */
export const DIFF_MAX_CHARS = 512 * 1024;

const STATUS: Record<string, CheckpointChange['status']> = { A: 'added', M: 'modified', D: 'deleted', T: 'type_changed' };

/** One checkpoint with its changes and diff (read-only; `commit` is already validated as 4 to 40 hex characters). */
export async function checkpointDetail(location: ShadowLocation, commit: string, signal?: AbortSignal): Promise<CheckpointDetail> {
  if (!repoExists(location)) throw notFound(`no checkpoints for working directory '${location.workDir}'`);
  const git = shadowGit(location, signal);
  const full = await resolveCommit(git, commit.toLowerCase());
  if (!full) throw notFound(`no checkpoint '${commit}' for working directory '${location.workDir}'`);
  // --root: the first commit kept is compared with the empty tree; no renames, so every change names one path.
  const range = ['diff-tree', '-r', '--root', '--no-renames', '--no-commit-id', '--no-ext-diff', '--no-color'];
  const [log, parents, names, numbers, listing, patch] = await Promise.all([
    git.raw(['log', '-1', `--format=${LOG_FORMAT}`, full]),
    git.raw(['show', '-s', '--format=%P', full]),
    git.raw([...range, '-z', '--name-status', full]),
    git.raw([...range, '-z', '--numstat', full]),
    git.raw(['ls-tree', '-r', '-z', '--name-only', full]),
    git.raw([...range, '-p', full]),
  ]);
  const [entry] = parseLog(log);
  return {
    ...entry,
    working_dir: location.workDir,
    parent: parents.trim().split(' ')[0] || null,
    changes: parseChanges(names, numbers),
    files: listing.split('\0').filter(Boolean),
    diff: patch.length > DIFF_MAX_CHARS ? patch.slice(0, DIFF_MAX_CHARS) : patch,
    diff_truncated: patch.length > DIFF_MAX_CHARS,
  };
}

/** `--name-status -z` (status NUL path NUL …) joined with `--numstat -z` (added TAB removed TAB path NUL …; '-' for binary). */
export function parseChanges(names: string, numbers: string): CheckpointChange[] {
  const counts = new Map<string, [number | null, number | null]>();
  for (const record of numbers.split('\0').filter(Boolean)) {
    const [added, removed, ...rest] = record.split('\t');
    const count = (n: string) => (n === '-' ? null : Number(n));
    counts.set(rest.join('\t'), [count(added), count(removed)]);
  }
  const fields = names.split('\0').filter(Boolean);
  const changes: CheckpointChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [additions, deletions] = counts.get(fields[i + 1]) ?? [null, null];
    changes.push({ path: fields[i + 1], status: STATUS[fields[i][0]] ?? 'modified', additions, deletions });
  }
  return changes;
}

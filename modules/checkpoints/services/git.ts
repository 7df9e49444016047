import type { SimpleGit } from 'simple-git';
import { lazyRequire } from '@talon/module-sdk';

/** simple-git is loaded with the first git call, not at start-up (where it was a noticeable share of the time). */
const simpleGitLib = lazyRequire<typeof import('simple-git')>(import.meta.url, 'simple-git');

/** Author and committer of every checkpoint commit. */
export const CHECKPOINT_AUTHOR = { name: 'Talon Checkpoint', email: 'checkpoints@talon.local' } as const;

export interface ShadowLocation {
  /** The shadow repository's git internals (GIT_DIR). */
  gitDir: string;
  /** The user's working directory (GIT_WORK_TREE). */
  workDir: string;
  /** An empty folder: the template for `git init` and core.hooksPath, so no hook ever runs. */
  emptyDir: string;
}

/**
 * A git client for one shadow repository, isolated from everything of the
 * user's: a fresh environment (no inherited GIT_* variables), no global or
 * system configuration, hooks pointed at an empty folder, no signing, our own
 * identity. The `-c` options beat the repository's own config file.
 * `signal` kills the git child when aborted (the bounded-time rule).
 *
 * simple-git waits 50 ms more for a child that printed nothing, so hot-path
 * calls are made to print (update-index --verbose, commit without --quiet).
 */
export function shadowGit(location: ShadowLocation, signal?: AbortSignal): SimpleGit {
  const { simpleGit } = simpleGitLib();
  return simpleGit({
    baseDir: location.gitDir,
    abort: signal,
    config: [
      `core.hooksPath=${location.emptyDir}`,
      'commit.gpgsign=false',
      'tag.gpgsign=false',
      `user.name=${CHECKPOINT_AUTHOR.name}`,
      `user.email=${CHECKPOINT_AUTHOR.email}`,
      'core.autocrlf=false',
      // Auto gc / maintenance would make an occasional snapshot slow, and a commit would spawn a second git to check.
      'gc.auto=0',
      'maintenance.auto=false',
      // The repository is ours even when the working directory belongs to someone else.
      'safe.directory=*',
    ],
    // These "unsafe" options are fixed values of ours, never user input: they are what isolates git.
    unsafe: { allowUnsafeConfigPaths: true, allowUnsafeHooksPath: true, allowUnsafeTemplateDir: true },
  }).env({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_DIR: location.gitDir,
    GIT_WORK_TREE: location.workDir,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    // Paths are file names, never globs or pathspec magic.
    GIT_LITERAL_PATHSPECS: '1',
    LC_ALL: 'C',
  });
}

import type { SimpleGit } from 'simple-git';

/**
 * The paths each shadow index holds, mirrored in memory so a snapshot knows
 * without an extra git call which touched files are new to the index. Loaded
 * with `ls-files` on first use; kept in step by the snapshot and restore code;
 * forgotten after any failure (the next use reloads it). Another process on the
 * same home may change an index too: the code that changes which paths an index
 * holds calls changed(), which tells the others (they forget their copy).
 */
export class IndexMirror {
  private readonly byRepo = new Map<string, Set<string>>();

  constructor(private readonly onChange: (gitDir: string) => void = () => undefined) {}

  /** The set of paths of this repository's index changed here. */
  changed(gitDir: string): void {
    this.onChange(gitDir);
  }

  async load(git: SimpleGit, gitDir: string, created: boolean): Promise<Set<string>> {
    let paths = this.byRepo.get(gitDir);
    if (!paths) {
      paths = created ? new Set() : new Set((await git.raw(['ls-files', '-z'])).split('\0').filter(Boolean));
      this.byRepo.set(gitDir, paths);
    }
    return paths;
  }

  /** Forgets one repository's mirror ('': every one). */
  forget(gitDir: string): void {
    if (gitDir) this.byRepo.delete(gitDir);
    else this.byRepo.clear();
  }
}

import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from 'pino';

const SOURCE = /\.(ts|mts|js|mjs|json|sql|toml)$/;

/**
 * Watches module folders and reports a changed module folder once per burst
 * of writes (editors and formatters write several times).
 */
export class ModuleWatcher {
  private readonly watcher: FSWatcher;
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly dirs: string[],
    private readonly log: Logger,
    private readonly onChange: (moduleDir: string) => void,
    private readonly debounceMs = 60,
  ) {
    this.watcher = watch(dirs, {
      ignoreInitial: true,
      ignored: (file, stats) => file.includes(`${path.sep}node_modules${path.sep}`) || (!!stats?.isFile() && !SOURCE.test(file)),
    });
    this.watcher.on('all', (_event, file) => this.changed(file));
    this.watcher.on('error', (err) => this.log.warn({ err }, 'module watcher error'));
  }

  ready(): Promise<void> {
    return new Promise((resolve) => this.watcher.once('ready', () => resolve()));
  }

  private changed(file: string): void {
    const dir = this.dirs.filter((d) => file === d || file.startsWith(d + path.sep)).sort((a, b) => b.length - a.length)[0];
    if (!dir) return;
    if (file.includes(`${path.sep}test${path.sep}`)) return; // a module's tests are not its code
    clearTimeout(this.timers.get(dir));
    this.timers.set(
      dir,
      setTimeout(() => {
        this.timers.delete(dir);
        this.onChange(dir);
      }, this.debounceMs),
    );
  }

  async close(): Promise<void> {
    for (const t of this.timers.values()) clearTimeout(t);
    await this.watcher.close();
  }
}

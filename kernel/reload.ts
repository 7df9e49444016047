import path from 'node:path';
import type { FSWatcher } from 'chokidar';
import type { Logger } from 'pino';

const SOURCE = /\.(ts|mts|js|mjs|json|sql|toml)$/;

/**
 * Watches module folders and reports a changed module folder once per burst
 * of writes (editors and formatters write several times).
 */
export class ModuleWatcher {
  private watcher!: FSWatcher;
  private readonly timers = new Map<string, NodeJS.Timeout>();

  private constructor(
    private readonly dirs: string[],
    private readonly log: Logger,
    private readonly onChange: (moduleDir: string) => void,
    private readonly debounceMs: number,
  ) {}

  /** chokidar is imported only in dev mode. Resolves once the initial scan is done. */
  static async start(dirs: string[], log: Logger, onChange: (moduleDir: string) => void, debounceMs = 60): Promise<ModuleWatcher> {
    const { watch } = await import('chokidar');
    const w = new ModuleWatcher(dirs, log, onChange, debounceMs);
    w.watcher = watch(dirs, {
      ignoreInitial: true,
      ignored: (file, stats) => file.includes(`${path.sep}node_modules${path.sep}`) || (!!stats?.isFile() && !SOURCE.test(file)),
    });
    w.watcher.on('all', (_event, file) => w.changed(file));
    w.watcher.on('error', (err) => w.log.warn({ err }, 'module watcher error'));
    await new Promise<void>((resolve) => w.watcher.once('ready', () => resolve()));
    return w;
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

import path from 'node:path';
import type { FSWatcher } from 'chokidar';
import type { Logger } from 'pino';

const SOURCE = /\.(ts|mts|js|mjs|json|sql|toml)$/;

/**
 * Watches the module roots and reports a touched module folder once per burst
 * of writes (editors and formatters write several times). keyOf maps a file to
 * its module folder (also for a module that was just added or removed).
 */
export class ModuleWatcher {
  private watcher!: FSWatcher;
  private readonly timers = new Map<string, NodeJS.Timeout>();

  private constructor(
    private readonly keyOf: (file: string) => string | undefined,
    private readonly log: Logger,
    private readonly onChange: (moduleDir: string) => void,
    private readonly debounceMs: number,
  ) {}

  /** chokidar is imported only in dev mode. Resolves once the initial scan is done. */
  static async start(
    roots: string[],
    keyOf: (file: string) => string | undefined,
    log: Logger,
    onChange: (moduleDir: string) => void,
    debounceMs = 25,
  ): Promise<ModuleWatcher> {
    const { watch } = await import('chokidar');
    const w = new ModuleWatcher(keyOf, log, onChange, debounceMs);
    w.watcher = watch(roots, {
      ignoreInitial: true,
      ignored: (file, stats) => file.includes(`${path.sep}node_modules${path.sep}`) || (!!stats?.isFile() && !SOURCE.test(file)),
    });
    w.watcher.on('all', (_event, file) => w.changed(file));
    // chokidar drops a second change of a file within 50 ms of the first (a save, then the formatter's): its raw
    // events, one per file-system notification, are never dropped.
    w.watcher.on('raw', (_event, name, details) => w.rawChanged(name, (details as { watchedPath: string }).watchedPath));
    w.watcher.on('error', (err) => w.log.warn({ err }, 'module watcher error'));
    await new Promise<void>((resolve) => w.watcher.once('ready', () => resolve()));
    return w;
  }

  /** A raw event names the watched file itself, or an entry of the watched folder. */
  private rawChanged(name: string | undefined, watched: string): void {
    if (!name) return;
    const file = path.basename(watched) === name ? watched : path.join(watched, name);
    if (!file.includes(`${path.sep}node_modules${path.sep}`) && SOURCE.test(file)) this.changed(file);
  }

  private changed(file: string): void {
    const dir = this.keyOf(file);
    if (!dir) return;
    if (file.slice(dir.length).includes(`${path.sep}test${path.sep}`)) return; // a module's tests are not its code
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

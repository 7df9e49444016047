import { existsSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import type { FSWatcher } from 'chokidar';
import type { Logger } from 'pino';

const SOURCE = /\.(ts|mts|js|mjs|json|sql|toml)$/;
const inNodeModules = (file: string) => file.includes(`${path.sep}node_modules${path.sep}`);

/**
 * Watches the module roots (dev mode); reports a touched module folder once per burst of writes (editor, formatter).
 */
export class ModuleWatcher {
  private watcher!: FSWatcher;
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /**
   * `files`: single files watched besides the module folders (the configuration file), with what a change of each runs.
   */
  private constructor(
    private readonly roots: string[],
    private readonly knownDirs: () => string[],
    private readonly onChange: (moduleDir: string) => void,
    private readonly files: ReadonlyMap<string, () => void>,
  ) {}

  /** chokidar is imported only in dev mode. Resolves once the initial scan is done. */
  static async start(
    roots: string[],
    knownDirs: () => string[],
    log: Logger,
    onChange: (moduleDir: string) => void,
    files: ReadonlyMap<string, () => void> = new Map(),
  ): Promise<ModuleWatcher> {
    const { watch } = await import('chokidar');
    const w = new ModuleWatcher(roots, knownDirs, onChange, files);
    w.watcher = watch([...roots, ...files.keys()], {
      ignoreInitial: true,
      ignored: (file, stats) => inNodeModules(file) || (!!stats?.isFile() && !SOURCE.test(file)),
    });
    w.watcher.on('all', (_event, file) => w.changed(file));
    // chokidar drops a second change of a file within 50 ms (a save, then the formatter's); its raw events keep it.
    w.watcher.on('raw', (_event, name, details) => {
      const watched = (details as { watchedPath: string }).watchedPath;
      const file = name && (path.basename(watched) === name ? watched : path.join(watched, name));
      if (file && SOURCE.test(file) && !inNodeModules(file)) w.changed(file);
    });
    w.watcher.on('error', (err) => log.warn({ err }, 'module watcher error'));
    await once(w.watcher, 'ready');
    return w;
  }

  private moduleDirOf(file: string): string | undefined {
    const known = this.knownDirs().filter((d) => file === d || file.startsWith(d + path.sep));
    if (known.length) return known.sort((a, b) => b.length - a.length)[0];
    for (let dir = path.dirname(file); this.roots.some((r) => dir.startsWith(r + path.sep)); dir = path.dirname(dir)) {
      if (existsSync(path.join(dir, 'module.toml'))) return dir;
    }
    return undefined;
  }

  private changed(file: string): void {
    const own = this.files.get(file);
    if (own) return this.debounce(file, own);
    const dir = this.moduleDirOf(file);
    // A module's tests are not its code.
    if (!dir || file.slice(dir.length).includes(`${path.sep}test${path.sep}`)) return;
    this.debounce(dir, () => this.onChange(dir));
  }

  private debounce(key: string, fire: () => void): void {
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        fire();
      }, 25),
    );
  }

  async close(): Promise<void> {
    for (const t of this.timers.values()) clearTimeout(t);
    await this.watcher.close();
  }
}

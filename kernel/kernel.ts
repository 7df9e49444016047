import { existsSync } from 'node:fs';
import path from 'node:path';
import { createContainer, asValue, InjectionMode, type AwilixContainer } from 'awilix';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { KernelApi, ModuleInfo, RouteInfo, TalonPaths, ConfigApi } from '@talon/module-sdk';
import type { DefinedModule } from '@talon/module-sdk';
import { resolveHome, preparePaths } from './home.ts';
import { ConfigStore, ConfigError } from './config/store.ts';
import { createConfigApi } from './config/api.ts';
import { createLogger, pruneLogs, type KernelLogger } from './logger.ts';
import { openDatabase } from './db.ts';
import { runMigrations } from './migrations.ts';
import { HookBus } from './hooks.ts';
import { ServiceRegistry } from './services.ts';
import { readManifest, type Manifest } from './modules/manifest.ts';
import { discoverManifests, loadDefinition, moduleRoots, withDependencies, type ModuleRoot } from './modules/discovery.ts';
import { planModules } from './modules/graph.ts';
import { ModuleBuildError } from './modules/bundle.ts';
import { ModuleInstance, type InstanceDeps } from './modules/instance.ts';
import { buildGeneration, RouteBuildError } from './http/generation.ts';
import { FrontServer } from './http/front.ts';
import { ModuleWatcher } from './reload.ts';

export const KERNEL_VERSION: string = '0.1.0';

export interface KernelOptions {
  home?: string;
  /** Hot reload: watch module folders. */
  dev?: boolean;
  /** Load only these modules (plus what they depend on); for tests and embedding. */
  only?: string[];
  /** Log to stdout (default true). */
  stdout?: boolean;
  /** Called after a requested shutdown finished (the CLI exits the process). */
  onShutdown?: (reason: string) => void;
  /** Built-in modules folder: `modules/` beside `kernel/` unless given (tests point it elsewhere). */
  modulesDir?: string;
}

interface ModuleRecord {
  manifest: Manifest;
  state: ModuleInfo['state'];
  error?: string;
  instance?: ModuleInstance;
}

/** The microkernel: configuration, DI, hooks, module lifecycle, HTTP generations. */
export class Kernel implements KernelApi {
  readonly version = KERNEL_VERSION;
  readonly startedAt = new Date();
  readonly dev: boolean;
  readonly home: string;
  readonly paths: TalonPaths;
  readonly hooks = new HookBus();
  readonly services = new ServiceRegistry();
  readonly config: ConfigApi;
  private readonly store: ConfigStore;
  private logger!: KernelLogger;
  private db!: Database;
  private root!: AwilixContainer;
  private readonly records = new Map<string, ModuleRecord>();
  private order: string[] = [];
  private readonly front = new FrontServer();
  private address?: { host: string; port: number };
  private watcher?: ModuleWatcher;
  private reloads = 0;
  private stopping?: Promise<void>;
  private routeTable: RouteInfo[] = [];
  private pendingRetire = new Set<Promise<void>>();
  /** Serialises module changes (reloads, adds, removes). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: KernelOptions = {}) {
    // Stack traces of bundled module code point at the original TypeScript files.
    process.setSourceMapsEnabled(true);
    this.dev = Boolean(options.dev);
    this.home = options.home ?? resolveHome();
    this.paths = preparePaths(this.home);
    this.store = new ConfigStore(path.join(this.home, 'config.toml'));
    this.config = createConfigApi({
      store: this.store,
      hooks: this.hooks.kernel,
      log: () => this.log,
      applyLive: () => this.logger.setLevel(this.store.settings().log_level),
    });
  }

  get log(): Logger {
    return this.logger.log;
  }

  get logs() {
    return this.logger.bus;
  }

  get database(): Database {
    return this.db;
  }

  listenAddress(): string | undefined {
    return this.address ? `${this.address.host.includes(':') ? `[${this.address.host}]` : this.address.host}:${this.address.port}` : undefined;
  }

  get port(): number | undefined {
    return this.address?.port;
  }

  reloadCount(): number {
    return this.reloads;
  }

  modules(): ModuleInfo[] {
    return [...this.records.values()].map((r) => this.info(r));
  }

  routes(): RouteInfo[] {
    return this.routeTable;
  }

  /** The live instance of a module (tests and the reload watcher use it). */
  instance(name: string): ModuleInstance | undefined {
    return this.records.get(name)?.instance;
  }

  shutdown(reason: string): void {
    setImmediate(() => {
      void this.stop(reason).then(() => this.options.onShutdown?.(reason));
    });
  }

  // ---------------------------------------------------------------- start

  /** Boots everything. Throws ConfigError for an invalid configuration (the CLI exits with 2). */
  async start(): Promise<void> {
    this.store.load();
    const settings = this.store.settings();
    this.logger = createLogger({ logsDir: this.paths.logs, level: settings.log_level, stdout: this.options.stdout });
    const pruned = pruneLogs(this.paths.logs);
    if (pruned.length) this.log.info({ files: pruned }, 'pruned old log files');

    const manifests = discoverManifests(this.moduleRoots(), this.log);
    const wanted = this.options.only ? withDependencies(this.options.only, manifests) : undefined;
    const disabled = new Set(settings.modules.disabled);
    for (const name of disabled) if (!manifests.some((m) => m.name === name)) this.log.warn(`[modules] disabled names '${name}', which is not a known module`);
    const plan = planModules(manifests, (m) => (wanted ? wanted.has(m.name) : m.enabled && !disabled.has(m.name)));
    for (const m of manifests) {
      const verdict = plan.verdicts.get(m.name)!;
      this.records.set(m.name, {
        manifest: m,
        state: verdict.state === 'load' ? 'stopped' : verdict.state,
        error: 'reason' in verdict ? verdict.reason : undefined,
      });
      if (m.config_section) this.store.declareSection(m.config_section, m.name, verdict.state === 'load');
      for (const extra of m.extra_config_sections) this.store.declareSection(extra, m.name, false);
      if (verdict.state === 'blocked' || verdict.state === 'failed') this.log.error(`module '${m.name}' not started: ${verdict.reason}`);
    }
    this.order = plan.order.map((m) => m.name);

    this.db = openDatabase(this.home);
    this.root = createContainer({ injectionMode: InjectionMode.PROXY, strict: true });
    this.root.register({
      kernel: asValue(this as KernelApi),
      db: asValue(this.db),
      log: asValue(this.log),
      hooks: asValue(this.hooks),
      paths: asValue(this.paths),
    });

    // Load code first: module config sections can only be validated with their schemas.
    const defs = new Map<string, DefinedModule>();
    const loaded = await Promise.allSettled(this.order.map((name) => loadDefinition(this.records.get(name)!.manifest)));
    this.order.forEach((name, i) => {
      const rec = this.records.get(name)!;
      const result = loaded[i];
      if (result.status === 'rejected') return this.fail(rec, result.reason);
      defs.set(name, result.value);
      if (rec.manifest.config_section) this.store.declareSection(rec.manifest.config_section, name, true, result.value.configSchema);
    });
    for (const warning of this.store.revalidate()) this.log.warn(warning);

    for (const name of this.order) {
      const rec = this.records.get(name)!;
      const def = defs.get(name);
      if (!def || !this.dependenciesUp(rec)) continue;
      try {
        runMigrations(this.db, name, rec.manifest.dir);
        const instance = new ModuleInstance(rec.manifest, def, this.instanceDeps());
        rec.instance = instance;
        instance.register();
      } catch (err) {
        await this.failInstance(rec, err);
      }
    }
    await this.hooks.kernel.kernel.boot.promise();
    for (const name of this.order) {
      const rec = this.records.get(name)!;
      if (!rec.instance) continue;
      if (!this.dependenciesUp(rec)) {
        await this.dropInstance(rec);
        continue;
      }
      try {
        await rec.instance.start();
        rec.state = 'running';
        this.hooks.kernel.module.loaded.call(this.info(rec));
      } catch (err) {
        await this.failInstance(rec, err);
      }
    }

    await this.swapGeneration();
    const { host, port } = parseListen(settings.api_listen);
    this.address = await this.front.listen(host, port);
    this.log.info({ address: this.listenAddress(), modules: this.running().map((i) => i.id) }, 'talon is listening');
    await this.hooks.kernel.kernel.ready.promise();
    if (this.dev) await this.startWatcher();
  }

  // ---------------------------------------------------------------- stop

  stop(reason = 'stop'): Promise<void> {
    this.stopping ??= this.doStop(reason);
    return this.stopping;
  }

  private async doStop(reason: string): Promise<void> {
    // A start that failed on its configuration has no logger, database or server yet.
    const log = this.logger?.log;
    log?.info({ reason }, 'shutting down');
    await this.watcher?.close();
    try {
      await this.hooks.kernel.kernel.shutdown.promise();
    } catch (err) {
      log?.error({ err }, 'shutdown hook failed');
    }
    await this.front.close(10_000);
    await Promise.allSettled(this.pendingRetire);
    for (const name of [...this.order].reverse()) {
      const rec = this.records.get(name);
      if (rec?.instance) await this.dropInstance(rec, 'stopped');
    }
    this.db?.close();
    log?.info('stopped');
    await this.logger?.close();
  }

  // ---------------------------------------------------------------- modules

  private instanceDeps(): InstanceDeps {
    return {
      root: this.root,
      db: this.db,
      log: this.log,
      paths: this.paths,
      hooks: this.hooks,
      services: this.services,
      kernel: this,
      settings: () => this.store.settings(),
      section: (name) => this.store.section(name),
    };
  }

  private dependenciesUp(rec: ModuleRecord): boolean {
    for (const dep of rec.manifest.depends) {
      const d = this.records.get(dep);
      if (!d?.instance) {
        rec.state = 'blocked';
        rec.error = `depends on '${dep}', which ${d ? `is ${d.state}` : 'is missing'}`;
        this.log.error(`module '${rec.manifest.name}' not started: ${rec.error}`);
        return false;
      }
    }
    return true;
  }

  private fail(rec: ModuleRecord, err: unknown): void {
    rec.state = 'failed';
    rec.error = (err as Error).message;
    this.log.error(
      { err: err instanceof ModuleBuildError ? undefined : err, location: (err as ModuleBuildError).location },
      `module '${rec.manifest.name}' failed: ${rec.error}`,
    );
  }

  private async failInstance(rec: ModuleRecord, err: unknown): Promise<void> {
    this.fail(rec, err);
    await this.dropInstance(rec, 'failed');
  }

  private async dropInstance(rec: ModuleRecord, state: ModuleInfo['state'] = rec.state): Promise<void> {
    const instance = rec.instance;
    rec.instance = undefined;
    rec.state = state;
    if (instance) {
      await instance.stop();
      this.hooks.kernel.module.unloaded.call(this.info(rec));
    }
  }

  private running(): ModuleInstance[] {
    return this.order.map((n) => this.records.get(n)?.instance).filter((i): i is ModuleInstance => !!i);
  }

  private info(rec: ModuleRecord): ModuleInfo {
    return {
      id: rec.manifest.name,
      version: rec.manifest.version,
      description: rec.manifest.description,
      state: rec.state,
      error: rec.error,
      depends: rec.manifest.depends,
      optionalDepends: rec.manifest.optional_depends,
      dir: rec.manifest.dir,
      thirdParty: rec.manifest.thirdParty,
    };
  }

  /** Builds a generation from the running modules; a module whose routes fail is stopped and left out. */
  private async swapGeneration(): Promise<void> {
    for (;;) {
      try {
        const generation = await buildGeneration(this.running(), { log: this.log, bodyLimit: this.store.settings().max_request_body_bytes, hooks: this.hooks });
        this.routeTable = generation.routes;
        this.track(this.front.swap(generation).drained);
        return;
      } catch (err) {
        if (!(err instanceof RouteBuildError)) throw err;
        const rec = this.records.get(err.module);
        if (!rec?.instance) throw err;
        await this.failInstance(rec, err);
      }
    }
  }

  private track(p: Promise<void>): void {
    this.pendingRetire.add(p);
    void p.finally(() => this.pendingRetire.delete(p));
  }

  // ---------------------------------------------------------------- hot reload

  private moduleRoots(): ModuleRoot[] {
    return moduleRoots(this.options.modulesDir, this.store.settings().module_paths, path.dirname(this.store.file));
  }

  private async startWatcher(): Promise<void> {
    const roots = this.moduleRoots().filter((r) => existsSync(r.dir));
    this.watcher = await ModuleWatcher.start(
      roots.map((r) => r.dir),
      (file) =>
        this.moduleDirOf(
          file,
          roots.map((r) => r.dir),
        ),
      this.log,
      (dir) => void this.onModuleFolderChanged(dir),
    );
    this.log.info({ roots: roots.map((r) => r.dir) }, 'hot reload: watching module folders');
  }

  /** The module folder a file belongs to: a known module's, or the nearest folder holding a module.toml. */
  private moduleDirOf(file: string, roots: string[]): string | undefined {
    const known = [...this.records.values()].map((r) => r.manifest.dir).filter((d) => file === d || file.startsWith(d + path.sep));
    if (known.length) return known.sort((a, b) => b.length - a.length)[0];
    for (let dir = path.dirname(file); roots.some((r) => dir.startsWith(r + path.sep)); dir = path.dirname(dir)) {
      if (existsSync(path.join(dir, 'module.toml'))) return dir;
    }
    return undefined;
  }

  private onModuleFolderChanged(dir: string): Promise<unknown> {
    const rec = [...this.records.values()].find((r) => r.manifest.dir === dir);
    if (!rec) return this.addModule(dir);
    if (!existsSync(path.join(dir, 'module.toml'))) return this.removeModule(rec.manifest.name);
    return this.reloadModule(rec.manifest.name);
  }

  /** Serialises a module change behind the ones already queued. */
  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Loads a module folder that appeared while running (dev mode, or an explicit call). */
  addModule(dir: string): Promise<{ ok: boolean; error?: string }> {
    return this.enqueue(async () => {
      let manifest: Manifest;
      try {
        const root = this.moduleRoots().find((r) => dir.startsWith(r.dir + path.sep));
        manifest = readManifest(dir, root?.thirdParty ?? true);
      } catch (err) {
        this.log.error(`new module in ${dir} ignored: ${(err as Error).message}`);
        return { ok: false, error: (err as Error).message };
      }
      const name = manifest.name;
      if (this.records.has(name)) {
        const error = `module '${name}' in ${dir} ignored: the name is taken by ${this.records.get(name)!.manifest.dir}`;
        this.log.error(error);
        return { ok: false, error };
      }
      const disabled = !manifest.enabled || this.store.settings().modules.disabled.includes(name);
      const rec: ModuleRecord = { manifest, state: disabled ? 'disabled' : 'stopped', error: disabled ? 'disabled in configuration' : undefined };
      this.records.set(name, rec);
      if (manifest.config_section) this.store.declareSection(manifest.config_section, name, !disabled);
      if (disabled || !this.dependenciesUp(rec)) return { ok: false, error: rec.error };
      this.order.push(name);
      const result = await this.doReload(name);
      if (!result.ok && !rec.instance) rec.state = 'failed';
      return result;
    });
  }

  /** Stops and forgets a module whose folder disappeared; modules that depend on it are stopped too (blocked). */
  removeModule(name: string): Promise<{ ok: boolean; removed: string[] }> {
    return this.enqueue(async () => {
      const gone = new Set([name]);
      let grew = true;
      while (grew) {
        grew = false;
        for (const rec of this.records.values()) {
          if (!gone.has(rec.manifest.name) && rec.instance && rec.manifest.depends.some((d) => gone.has(d))) {
            gone.add(rec.manifest.name);
            grew = true;
          }
        }
      }
      const leaving = this.running().filter((i) => gone.has(i.id));
      const generation = await buildGeneration(
        this.running().filter((i) => !gone.has(i.id)),
        { log: this.log, bodyLimit: this.store.settings().max_request_body_bytes, hooks: this.hooks },
      );
      for (const instance of leaving) instance.detach();
      this.routeTable = generation.routes;
      for (const n of gone) {
        const rec = this.records.get(n)!;
        rec.instance = undefined;
        rec.state = n === name ? 'stopped' : 'blocked';
        rec.error = n === name ? 'removed' : `depends on '${name}', which was removed`;
      }
      const infos = new Map(leaving.map((i) => [i.id, this.info(this.records.get(i.id)!)]));
      this.track(
        this.front.swap(generation, { closeModules: gone }).drained.then(async () => {
          for (const instance of leaving.reverse()) {
            await instance.stop();
            this.hooks.kernel.module.unloaded.call(infos.get(instance.id)!);
          }
        }),
      );
      this.records.delete(name);
      this.order = this.order.filter((n) => n !== name);
      this.log.info({ stopped: [...gone] }, `module '${name}' removed`);
      return { ok: true, removed: [...gone] };
    });
  }

  /**
   * Replaces a module with its changed code. The new copy is built, registered
   * and started next to the old one; only when its routes build too does the
   * front server switch. Any failure leaves the previous version serving.
   */
  reloadModule(name: string): Promise<{ ok: boolean; error?: string; ms: number }> {
    return this.enqueue(() => this.doReload(name));
  }

  private async doReload(name: string): Promise<{ ok: boolean; error?: string; ms: number }> {
    const started = performance.now();
    const rec = this.records.get(name);
    const elapsed = () => Math.round(performance.now() - started);
    if (!rec) return { ok: false, error: `no module '${name}'`, ms: elapsed() };
    if (rec.state === 'disabled' || rec.state === 'blocked') return { ok: false, error: `module '${name}' is ${rec.state}`, ms: elapsed() };
    const old = rec.instance;
    let next: ModuleInstance | undefined;
    const section = rec.manifest.config_section;
    const oldSchema = old?.def.configSchema;
    try {
      const manifest = readManifest(rec.manifest.dir, rec.manifest.thirdParty);
      if (manifest.name !== name) throw new Error(`module.toml renamed the module to '${manifest.name}'; restart to apply`);
      const def = await loadDefinition(manifest, true);
      if (section) {
        this.store.declareSection(section, name, true, def.configSchema);
        this.store.revalidate();
      }
      runMigrations(this.db, name, manifest.dir);
      next = new ModuleInstance(manifest, def, this.instanceDeps());
      next.register();
      await next.start();
      const live = this.running().map((i) => (i === old ? next! : i));
      if (!old) live.push(next);
      const generation = await buildGeneration(orderLike(live, this.order), {
        log: this.log,
        bodyLimit: this.store.settings().max_request_body_bytes,
        hooks: this.hooks,
      });
      old?.detach();
      rec.manifest = manifest;
      rec.instance = next;
      rec.state = 'running';
      rec.error = undefined;
      this.routeTable = generation.routes;
      const retired = this.front.swap(generation, { closeModules: new Set([name]) }).drained.then(async () => {
        if (old) {
          await old.stop();
          this.hooks.kernel.module.unloaded.call({ ...this.info(rec), state: 'stopped' });
        }
      });
      this.track(retired);
      this.reloads++;
      this.hooks.kernel.module.loaded.call(this.info(rec));
      this.log.info({ ms: elapsed() }, `module '${name}' reloaded`);
      return { ok: true, ms: elapsed() };
    } catch (err) {
      if (next) await next.stop();
      if (section) {
        this.store.declareSection(section, name, true, oldSchema);
        this.store.revalidate();
      }
      const location = (err as ModuleBuildError).location;
      this.log.error(
        { err: location ? undefined : err, location },
        `module '${name}' reload failed; the previous version keeps serving: ${(err as Error).message}`,
      );
      return { ok: false, error: (err as Error).message, ms: elapsed() };
    }
  }

  /** Waits until every retired generation has drained and old module copies stopped. */
  async settled(): Promise<void> {
    await this.queue;
    await Promise.allSettled(this.pendingRetire);
  }
}

function orderLike(instances: ModuleInstance[], order: string[]): ModuleInstance[] {
  return [...instances].sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
}

export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(listen);
  if (!m) throw new ConfigError(`invalid value for 'api_listen': '${listen}' is not host:port`);
  const port = Number(m[3]);
  if (port > 65535) throw new ConfigError(`invalid value for 'api_listen': port ${port} is above 65535`);
  return { host: m[1] ?? m[2], port };
}

export { ConfigError };

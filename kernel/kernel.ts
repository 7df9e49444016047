import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { ConfigError, isConfigError } from '@talon/module-sdk';
import { EventBus } from './events.ts';
import type { DefinedModule, KernelApi, KernelSettings, ModuleInfo, RouteInfo } from '@talon/module-sdk';
import { ConfigStore } from './config/store.ts';
import { createLogger, type KernelLogger } from './logger.ts';
import { chooseDatabase, closeDatabase, openDatabase, shownUrl } from './db.ts';
import { SqliteStore } from './store/sqlite.ts';
import { PostgresStore } from './store/postgres.ts';
import { prepareLedger } from './migrations.ts';
import { NodeRegistry } from './store/nodes.ts';
import { agreeOnDataDir, prepareDataDir, type DataPlace } from './store/fleet.ts';
import { Feed } from './store/feed.ts';
import { HookBus } from './hooks.ts';
import { ServiceRegistry } from './services.ts';
import { discoverManifests, moduleRoots, readManifest, type Manifest } from './loader/manifest.ts';
import { planModules, withDependencies } from './loader/graph.ts';
import { CodeLoader } from './loader/code.ts';
import type { InstanceDeps } from './loader/instance.ts';
import { FrontServer } from './http/front.ts';
import { ModuleWatcher } from './reload.ts';
import { BootAbort, Supervisor, type ModuleRecord } from './supervisor.ts';

export interface KernelOptions {
  /** Default $TALON_HOME, else ~/.talon. */
  home?: string;
  /** The shared data directory (tests, embedding); default $TALON_DATA_DIR, else the home (see store/fleet.ts). */
  dataDir?: string;
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
  /** host:port instead of api_listen (`--listen`, embedding, tests); else TALON_API_LISTEN, else api_listen. */
  listen?: string;
  /** How long a retiring module copy's tracked work may take to settle after its stop signal (ms; default 5 s). */
  settleMs?: number;
  /** The node heartbeat (ms; default 3 s): a process silent for three beats is dead and its claims are taken over. */
  heartbeatMs?: number;
  /** How often the other processes' changes and events are read (ms; default 250; PostgreSQL: 5 s, behind LISTEN). */
  feedPollMs?: number;
  /** A PostgreSQL URL to run on, before TALON_DATABASE_URL and `[database] url` (tests, embedding). */
  databaseUrl?: string;
}

/** The microkernel: configuration, DI, hooks, the module lifecycle (see supervisor.ts), HTTP and hot reload. */
export class Kernel implements InstanceDeps {
  readonly version: string = '0.2.0';
  readonly settleMs: number;
  readonly startedAt = new Date();
  readonly dev: boolean;
  /** This node's own folder: config.toml, the SQLite database, logs. */
  readonly home: string;
  /** Where the shared files live (modules' `ctx.home`): TALON_DATA_DIR on the nodes of a fleet, else the home. */
  readonly dataHome: string;
  private readonly dataPlace: DataPlace;
  readonly hooks = new HookBus();
  readonly services = new ServiceRegistry();
  readonly events = new EventBus((data, message) => this.log.warn(data, message));
  /** Modules see it as ConfigAccess (KernelApi). */
  readonly config: ConfigStore;
  readonly api: KernelApi;
  /** Set by start(): the kernel's logger and the service's database (the SQLite connection; unset on PostgreSQL). */
  log!: Logger;
  database!: Database;
  /** Set by start(): the storage port over the database, this process as a node, and the cross-process feed. */
  store!: SqliteStore | PostgresStore;
  nodes!: NodeRegistry;
  feed!: Feed;
  private readonly front = new FrontServer(this.hooks.kernel.http.baseHeaders);
  private readonly supervisor: Supervisor;
  private readonly code = new CodeLoader((name) => this.manifest(name));
  private logger!: KernelLogger;
  private address?: { host: string; port: number };
  private watcher?: ModuleWatcher;
  private stopping?: Promise<void>;
  /** KernelOptions.only, with its dependencies, and the modules [modules] disabled named at boot (they run anyway). */
  private only?: { names: Set<string>; disabledAtBoot: Set<string> };
  /** Serialises module changes (reloads, adds, removes). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: KernelOptions = {}) {
    this.dev = Boolean(options.dev);
    this.settleMs = options.settleMs ?? 5_000;
    this.home = path.resolve(options.home ?? folderFromEnv('TALON_HOME') ?? path.join(os.homedir(), '.talon'));
    this.dataPlace = dataPlaceOf(options.dataDir, this.home);
    this.dataHome = this.dataPlace.dir;
    this.config = new ConfigStore(path.join(this.home, 'config.toml'), this.hooks.kernel, {
      applied: async (changed) => {
        if (changed.includes('modules')) await this.switchModules();
        this.logger.setLevel(this.config.settings().log_level);
      },
      // A candidate that switches off a running security module is refused before anything is written or applied.
      check: (s, isSet) => {
        for (const { manifest: m, instance } of this.supervisor.records.values())
          if (instance && !this.wanted(m, s)) this.refuseUnsafeDisable(m, s, isSet);
      },
    });
    this.supervisor = new Supervisor({
      kernel: this,
      settings: () => this.config.settings(),
      front: this.front,
      prewarm: this.dev,
    });
    this.api = this.frozenApi();
  }

  get port(): number | undefined {
    return this.address?.port;
  }

  /** The address the service listens on, as host:port (an IPv6 host in brackets); none before it listens. */
  listenAddress(): string | undefined {
    if (!this.address) return undefined;
    const { host, port } = this.address;
    return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  }

  /** Where an address that overrides api_listen comes from: several processes on one home each need their own. */
  private listenOverride(): { value: string; source: string } | undefined {
    if (this.options.listen) return { value: this.options.listen, source: '--listen' };
    const env = process.env.TALON_API_LISTEN?.trim();
    return env ? { value: env, source: 'TALON_API_LISTEN' } : undefined;
  }

  // The KernelApi's questions, answered by the parts that know.
  readonly apiListen = (): string => this.listenOverride()?.value ?? this.config.settings().api_listen;
  readonly reloadCount = (): number => this.supervisor.reloads;
  readonly modules = (): ModuleInfo[] => [...this.supervisor.records.values()].map((r) => this.supervisor.info(r));
  readonly routes = (): RouteInfo[] => this.supervisor.routeTable;
  readonly earlyLogLines = (): readonly string[] => this.logger.earlyLines();
  readonly moduleConfig = (m: Manifest): Record<string, unknown> =>
    this.config.moduleConfig(m.name, m.config_section, m.config_keys);
  readonly manifest = (name: string): Manifest | undefined => this.supervisor.records.get(name)?.manifest;

  /** What modules see of the kernel (`ctx.kernel`): frozen, so that no module reaches past it into the kernel. */
  private frozenApi(): KernelApi {
    return Object.freeze({
      version: this.version,
      startedAt: this.startedAt,
      dev: this.dev,
      config: this.config,
      listenAddress: () => this.listenAddress(),
      apiListen: () => this.apiListen(),
      modules: () => this.modules(),
      routes: () => this.routes(),
      earlyLogLines: () => this.earlyLogLines(),
      shutdown: (reason: string) => this.shutdown(reason),
      reloadCount: () => this.reloadCount(),
      reloadModule: (name: string) => this.reloadModule(name),
    });
  }

  /** A stop asked for from inside (a module, the fence): it begins after the asking code has returned. */
  shutdown(reason: string): void {
    setImmediate(async () => {
      await this.stop(reason);
      this.options.onShutdown?.(reason);
    });
  }

  /** Boots; throws ConfigError for an invalid configuration, BootAbort when start-up must stop (Supervisor.fail). */
  async start(): Promise<void> {
    mkdirSync(this.home, { recursive: true });
    prepareDataDir(this.dataPlace);
    this.config.load();
    const override = this.listenOverride();
    if (override) parseListen(override.value, override.source);
    this.logger = createLogger({
      level: this.config.settings().log_level,
      stdout: this.options.stdout,
      hook: this.hooks.kernel.log.line,
    });
    this.log = this.logger.log;
    this.plan(discoverManifests(this.moduleRoots(), this.log));
    await this.openStore();
    // A fleet node that mounted another data directory (or none) stops here, before any module writes a file.
    if (this.store.dialect === 'postgres') await agreeOnDataDir(this.store, this.dataPlace);
    const defs = await this.loadCode();
    for (const warning of this.config.revalidate()) this.log.warn(warning);
    await this.supervisor.boot(defs);
    await this.supervisor.serve();
    const { host, port } = parseListen(this.apiListen(), this.listenOverride()?.source);
    this.address = await this.front.listen(host, port);
    await this.nodes.listening(this.listenAddress()!);
    const from = this.listenOverride()?.source ?? 'api_listen';
    this.log.info(
      { address: this.listenAddress(), from, node: this.nodes.id, modules: this.supervisor.running().map((i) => i.id) },
      'talon is listening',
    );
    await this.hooks.kernel.kernel.ready.promise();
    if (this.dev) await this.startWatcher();
  }

  /** The database, the store on it, this process's node row and the feed of what the other processes do. */
  private async openStore(): Promise<void> {
    const warn = (message: string) => (err: unknown) => this.log.warn({ err }, message);
    const choice = chooseDatabase([
      ['databaseUrl', this.options.databaseUrl],
      ['TALON_DATABASE_URL', process.env.TALON_DATABASE_URL],
      ['database.url', this.config.settings().database.url],
    ]);
    if (choice.engine === 'postgres') await this.openPostgres(choice.url, warn('database connection failed'));
    else {
      this.database = openDatabase(this.home, (error) => this.log.warn({ error }, 'database checkpoint failed'));
      this.store = new SqliteStore(this.database, { checkAwaits: this.dev || Boolean(process.env.NODE_TEST_CONTEXT) });
    }
    this.nodes = new NodeRegistry(this.store, this.options.heartbeatMs ?? 3_000, warn('node heartbeat failed'), () => {
      this.log.error(
        { node: this.nodes.id },
        'this process was silent longer than three heartbeats and another process took over its work: ' +
          'stopping, so that nothing runs twice',
      );
      this.shutdown(FENCED);
    });
    await this.nodes.start(this.apiListen());
    this.feed = new Feed(
      this.store,
      this.nodes.id,
      this.options.feedPollMs,
      (event) => this.events.receive(event),
      warn("reading the other processes' changes failed"),
      this.log,
    );
    await this.feed.start();
    // On SQLite a process alone on its home shares nothing (the common case costs no write). A node learns of a new
    // one only at its next beat, so on PostgreSQL, where nodes come and go, every event is shared: a node that has just
    // started must not miss what the others publish meanwhile.
    const fleet = this.store.dialect === 'postgres';
    this.events.share = (event) => {
      if (fleet || !this.nodes.alone) this.feed.publish({ ...event, node: this.nodes.id });
    };
  }

  /** The PostgreSQL store: connected and its version checked, and the migration ledger there, before any module. */
  private async openPostgres(url: string, onError: (err: unknown) => void): Promise<void> {
    const { statement_timeout_ms, pool_size } = this.config.settings().database;
    const store = new PostgresStore({ url, statementTimeoutMs: statement_timeout_ms, poolSize: pool_size, onError });
    this.store = store;
    try {
      await store.check();
      await prepareLedger(store);
    } catch (err) {
      throw new BootAbort(`the PostgreSQL database at ${shownUrl(url)} cannot be used: ${(err as Error).message}`);
    }
    this.log.info({ database: shownUrl(url) }, 'database: PostgreSQL');
  }

  /** Records every module with its verdict (load, disabled, blocked, failed) and claims its configuration keys. */
  private plan(manifests: Manifest[]): void {
    const settings = this.config.settings();
    if (this.options.only)
      this.only = {
        names: withDependencies(this.options.only, manifests),
        disabledAtBoot: new Set(settings.modules.disabled),
      };
    const only = this.only?.names;
    for (const name of [...settings.modules.disabled, ...settings.modules.enabled])
      if (!manifests.some((m) => m.name === name))
        this.log.warn(`[modules] names '${name}', which is not a known module`);
    if (!only)
      for (const m of manifests)
        if (!this.wanted(m, settings)) this.refuseUnsafeDisable(m, settings, this.config.isSet);
    const plan = planModules(manifests, (m) => this.wanted(m, settings));
    for (const m of manifests) {
      const verdict = plan.verdicts.get(m.name)!;
      const rec = this.record(
        m,
        verdict.state === 'load' ? 'stopped' : verdict.state,
        'reason' in verdict ? verdict.reason : undefined,
      );
      // Left out because something it needs was disabled on purpose: no failure (a security module included).
      if (verdict.state === 'blocked' && verdict.byChoice)
        this.log.info(`module '${m.name}' not started: ${verdict.reason}`);
      else if (verdict.state === 'blocked' || verdict.state === 'failed')
        this.supervisor.fail(rec, new Error(verdict.reason), verdict.state);
    }
    // Every module has its place in the order, so that one switched on later starts after what it needs.
    const all = planModules(manifests, () => true).order.map((m) => m.name);
    this.supervisor.order = [...all, ...manifests.map((m) => m.name).filter((n) => !all.includes(n))];
  }

  /**
   * Whether the configuration wants a module running: on by its manifest or `[modules] enabled`, and not disabled. With
   * `only` (tests, embedding) the modules given; `[modules] disabled` counts for them from what it said at boot on.
   */
  private readonly wanted = (m: Manifest, s: KernelSettings): boolean =>
    this.only
      ? this.only.names.has(m.name) && (!s.modules.disabled.includes(m.name) || this.only.disabledAtBoot.has(m.name))
      : byConfig(m, s);

  private record(manifest: Manifest, state: ModuleRecord['state'], error?: string): ModuleRecord {
    const rec = { manifest, state, error };
    this.supervisor.records.set(manifest.name, rec);
    this.claimConfig(manifest, state === 'stopped');
    return rec;
  }

  /** A security module is not switched off while its protection is configured, unless the override says so. */
  private refuseUnsafeDisable(m: Manifest, s: KernelSettings, isSet: (key: string) => boolean): void {
    if (!m.critical || s.modules.allow_disable_critical.includes(m.name)) return;
    const configured = m.protects.filter(isSet);
    if (m.protects.length && !configured.length) return;
    const why = configured.length
      ? `while ${configured.map((k) => `'${k}'`).join(', ')} is set`
      : 'its protection is always on';
    throw new ConfigError(
      `${this.config.file}: [modules] disabled lists '${m.name}', a security module, and ${why}; ` +
        'remove it from the list, or add it to [modules] allow_disable_critical to disable it anyway',
    );
  }

  private claimConfig(m: Manifest, enabled: boolean, def?: DefinedModule): void {
    if (m.config_section)
      this.config.claim(m.config_section, { module: m.name, enabled, table: true, schema: def?.configSchema });
    for (const key of m.config_keys) {
      const schema = def?.configKeys?.[key];
      this.config.claim(key, {
        module: m.name,
        enabled,
        table: (schema as { type?: string } | undefined)?.type === 'object',
        schema,
      });
    }
    if (def?.configAliases) this.config.setAliases(m.name, def.configAliases);
  }

  /** Loads the code of the modules to start (in parallel); config keys can only be validated with it. */
  private async loadCode(): Promise<Map<string, DefinedModule | Error>> {
    const load = async (m: Manifest): Promise<[string, DefinedModule | Error]> => {
      try {
        const def = await this.code.definition(m);
        this.claimConfig(m, true, def);
        return [m.name, def];
      } catch (err) {
        return [m.name, err as Error];
      }
    };
    const toStart = [...this.supervisor.records.values()].filter((r) => r.state === 'stopped');
    return new Map(await Promise.all(toStart.map((r) => load(r.manifest))));
  }

  /** Stops once: a second call waits for the first stop. */
  stop(reason = 'stop'): Promise<void> {
    this.stopping ??= this.doStop(reason);
    return this.stopping;
  }

  private async doStop(reason: string): Promise<void> {
    // A start that failed on its configuration has no logger, database or server yet.
    const log = this.logger?.log;
    log?.info({ reason }, 'shutting down');
    await this.watcher?.close();
    await this.hooks.kernel.kernel.shutdown.promise().catch((err) => log?.error({ err }, 'shutdown hook failed'));
    await this.front.close(10_000);
    await this.supervisor.settled();
    // Every copy's background work ends at once (each waits at most settleMs), then they stop in reverse order.
    await Promise.all(this.supervisor.running().map((i) => i.retireWork()));
    for (const name of [...this.supervisor.order].reverse()) {
      const rec = this.supervisor.records.get(name);
      if (rec?.instance) await this.supervisor.drop(rec, 'stopped');
    }
    this.events.share = undefined;
    this.feed?.stop();
    await this.nodes?.stop().catch((err: unknown) => log?.warn({ err }, 'node row not updated at stop'));
    if (this.database) await closeDatabase(this.database);
    if (this.store instanceof PostgresStore) await this.store.close();
    await this.code.dispose();
    log?.info('stopped');
    log?.flush();
  }

  private readonly moduleRoots = () =>
    moduleRoots(this.options.modulesDir, this.config.settings().module_paths, path.dirname(this.config.file));

  private async startWatcher(): Promise<void> {
    if (this.store.dialect === 'postgres') {
      this.log.warn(`hot reload is off (--dev ignored): ${FLEET_RELOAD}`);
      return;
    }
    const roots = this.moduleRoots().flatMap((r) => (existsSync(r.dir) ? [r.dir] : []));
    const known = () => [...this.supervisor.records.values()].map((r) => r.manifest.dir);
    const files = new Map([[this.config.file, () => void this.onConfigFileChanged()]]);
    this.watcher = await ModuleWatcher.start(
      roots,
      known,
      this.log,
      (dir) => void this.onModuleFolderChanged(dir),
      files,
    );
    this.log.info(
      { roots, config: this.config.file },
      'hot reload: watching module folders and the configuration file',
    );
  }

  /** Dev mode: an edited config.toml is applied like POST /api/config/reload; an invalid one is only logged. */
  private async onConfigFileChanged(): Promise<void> {
    try {
      const data = this.config.read();
      if (JSON.stringify(data) === JSON.stringify(this.config.raw())) return;
      const { changed } = await this.config.apply(data, '');
      this.log.info({ changed }, `${this.config.file} changed and was applied`);
    } catch (err) {
      this.log.error(`${this.config.file} changed but was not applied: ${(err as Error).message}`);
    }
  }

  private onModuleFolderChanged(dir: string): Promise<unknown> {
    const rec = [...this.supervisor.records.values()].find((r) => r.manifest.dir === dir);
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
      const thirdParty = this.moduleRoots().find((r) => dir.startsWith(r.dir + path.sep))?.thirdParty ?? true;
      const [manifest] = discoverManifests([{ dir, thirdParty }], this.log, this.manifest);
      if (!manifest) return { ok: false, error: `no module was added from ${dir} (the log says why)` };
      // A folder added at run time is judged by the configuration alone, also in a kernel started with `only`.
      const disabled = !byConfig(manifest, this.config.settings());
      this.only?.names.add(manifest.name);
      const rec = this.record(
        manifest,
        disabled ? 'disabled' : 'stopped',
        disabled ? 'disabled in configuration' : undefined,
      );
      if (disabled || !this.supervisor.dependenciesUp(rec)) return { ok: false, error: rec.error };
      this.supervisor.order.push(manifest.name);
      return this.supervisor.replace(rec, () => this.loadChanged(rec));
    });
  }

  /** Stops and forgets a module whose folder disappeared; modules that depend on it are stopped too (blocked). */
  removeModule(name: string): Promise<{ ok: boolean; removed: string[] }> {
    return this.enqueue(async () => ({
      ok: true,
      removed: await this.supervisor.remove(name, 'its folder was removed', true),
    }));
  }

  /** Replaces a module with its changed code, all or nothing (see Supervisor.replace). */
  reloadModule(name: string): Promise<{ ok: boolean; error?: string; ms: number }> {
    return this.enqueue(async () => {
      const rec = this.supervisor.records.get(name);
      if (!rec) return { ok: false, error: `no module '${name}'`, ms: 0 };
      if (rec.state === 'disabled' || rec.state === 'blocked')
        return { ok: false, error: `module '${name}' is ${rec.state}`, ms: 0 };
      const previous = rec.instance?.def;
      const result = await this.supervisor.replace(rec, () => this.loadChanged(rec));
      // A failed reload keeps the old copy: its configuration schema comes back with it.
      if (!result.ok && previous) {
        this.claimConfig(rec.manifest, true, previous);
        this.config.revalidate();
      }
      return result;
    });
  }

  /** Reads a module's manifest and code again; its configuration is validated with the new schema. */
  private async loadChanged(rec: ModuleRecord): Promise<{ manifest: Manifest; def: DefinedModule }> {
    const manifest = readManifest(rec.manifest.dir, rec.manifest.thirdParty);
    if (manifest.name !== rec.manifest.name)
      throw new Error(`module.toml renamed the module to '${manifest.name}'; restart to apply`);
    this.code.forget(manifest.name);
    const def = await this.code.definition(manifest, true);
    this.claimConfig(manifest, true, def);
    this.config.revalidate();
    return { manifest, def };
  }

  /**
   * Starts and stops modules to match `[modules]` after the configuration changed (Supervisor.match), all or nothing.
   * A failure throws (409): the configuration store then goes back to the previous file's data.
   */
  private switchModules(): Promise<void> {
    return this.enqueue(async () => {
      const settings = this.config.settings();
      // A module whose wish changed (off to on, or the reverse) would start or stop on this node alone.
      if (this.store.dialect === 'postgres') {
        const switching = [...this.supervisor.records.values()]
          .filter((r) => (r.state === 'disabled') === this.wanted(r.manifest, settings))
          .map((r) => r.manifest.name);
        if (switching.length) {
          const message = `modules are not switched at run time (${switching.join(', ')}): ${FLEET_RELOAD}`;
          throw Object.assign(new Error(message), { statusCode: 409 });
        }
      }
      const claimed: Manifest[] = [];
      const load = async ({ manifest: m }: ModuleRecord) => {
        const def = await this.code.definition(m);
        claimed.push(m);
        this.claimConfig(m, true, def);
        this.config.revalidate();
        return def;
      };
      try {
        const changed = await this.supervisor.match((m) => this.wanted(m, settings), load);
        for (const name of changed) {
          const rec = this.supervisor.records.get(name)!;
          if (!rec.instance) this.claimConfig(rec.manifest, false);
        }
        if (changed.length)
          this.log.info(
            { modules: changed.map((n) => `${n}: ${this.supervisor.records.get(n)!.state}`) },
            'modules switched',
          );
      } catch (err) {
        for (const m of claimed) this.claimConfig(m, false);
        const message = `modules were not switched, nothing changed: ${(err as Error).message}`;
        this.log.error({ err }, message);
        throw isConfigError(err) ? err : Object.assign(new Error(message), { statusCode: 409 });
      }
    });
  }

  /** Waits until queued module changes are done and retired generations have drained. */
  async settled(): Promise<void> {
    await this.queue;
    await this.supervisor.settled();
  }
}

/** A folder named by an environment variable, a leading ~ meaning the user's home folder; undefined when unset. */
function folderFromEnv(name: string): string | undefined {
  const fromEnv = process.env[name]?.trim();
  return fromEnv ? fromEnv.replace(/^~(?=$|\/)/, os.homedir()) : undefined;
}

/** The data directory: KernelOptions.dataDir, else $TALON_DATA_DIR, else the home. */
function dataPlaceOf(option: string | undefined, home: string): DataPlace {
  if (option) return { dir: path.resolve(option), from: 'dataDir' };
  const fromEnv = folderFromEnv('TALON_DATA_DIR');
  return fromEnv ? { dir: path.resolve(fromEnv), from: 'TALON_DATA_DIR' } : { dir: home };
}

/** Whether `[modules]` (and the module's own manifest) want a module running. */
const byConfig = (m: Manifest, s: KernelSettings): boolean =>
  (m.enabled || s.modules.enabled.includes(m.name)) && !s.modules.disabled.includes(m.name);

function parseListen(listen: string, source = 'api_listen'): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(listen);
  if (!m || Number(m[3]) > 65535)
    throw new ConfigError(
      `invalid value for '${source}': '${listen}' is not host:port, ` +
        'e.g. "127.0.0.1:4546" or "[::1]:4546" (a port up to 65535)',
    );
  return { host: m[1] ?? m[2], port: Number(m[3]) };
}

/**
 * Why modules are not reloaded, added, removed or switched while running on PostgreSQL: the database may be shared by
 * several nodes (a fleet), each with its own code and config.toml, and a change on the one node a request reached
 * would leave the others running something else.
 */
const FLEET_RELOAD =
  'on PostgreSQL the nodes of a fleet must run the same modules, and a change on one node would split the fleet; ' +
  'change config.toml or the code on every node and restart them one after another (rolling) instead';

/** The shutdown reason of a process found dead by another one (the CLI exits with 1, for supervisors to restart it). */
export const FENCED = 'declared dead by another process';

export { ConfigError, BootAbort };

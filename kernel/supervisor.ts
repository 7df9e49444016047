import path from 'node:path';
import type { Database } from 'better-sqlite3';
import {
  isConfigError,
  type DefinedModule,
  type KernelSettings,
  type ModuleInfo,
  type ReloadOutcome,
  type RouteInfo,
} from '@talon/module-sdk';
import {
  applyMigrations,
  migratePostgres,
  needsNoTransaction,
  pendingMigrations,
  pendingPostgres,
  SchemaTooNew,
} from './migrations.ts';
import { ModuleInstance, type InstanceDeps } from './loader/instance.ts';
import type { Manifest } from './loader/manifest.ts';
import { Draft, nextTurn, RouteBuildError, type Generation } from './http/generation.ts';
import type { FrontServer } from './http/front.ts';

export type ModuleRecord = {
  manifest: Manifest;
  state: ModuleInfo['state'];
  error?: string;
  instance?: ModuleInstance;
  lastReload?: ReloadOutcome;
};
/** A module to stop, and the state it is left in. */
export type Leaving = { name: string; state: 'disabled' | 'failed'; reason: string };

/** Start-up stops: a security module failed, or `[startup] on_boot_failure = "abort"`. */
export class BootAbort extends Error {
  override name = 'BootAbort';
}

export interface SupervisorDeps {
  kernel: InstanceDeps;
  settings: () => KernelSettings;
  front: FrontServer;
  /** Dev mode: after a module's reload, draft the generation for its next change (see prewarm). */
  prewarm: boolean;
}

/**
 * The module lifecycle, written once: stage (migrations, register), start, build the generation, commit in one step.
 */
export class Supervisor {
  readonly records = new Map<string, ModuleRecord>();
  order: string[] = [];
  routeTable: RouteInfo[] = [];
  reloads = 0;
  /** Failures abort start-up only while booting; later they only fail the module. */
  private booting = true;
  private readonly retiring = new Set<Promise<void>>();
  private warm?: { module: string; draft: Promise<Draft | undefined> };

  constructor(private readonly deps: SupervisorDeps) {}

  /**
   * Migrations and register(), all or nothing: a failure rolls the migrations back. The ledger is read and the
   * migrations applied under the database's write lock (BEGIN IMMEDIATE), so that processes starting together on one
   * database migrate once: the second finds the ledger written.
   */
  async stage(manifest: Manifest, def: DefinedModule): Promise<{ instance: ModuleInstance; migrated: boolean }> {
    const { store, log } = this.deps.kernel;
    if (store.dialect === 'postgres') return this.stagePostgres(manifest, def);
    const db = store.sqlite();
    let instance: ModuleInstance | undefined;
    const apply = (): { instance: ModuleInstance; migrated: boolean } => {
      const pending = pendingMigrations(db, manifest.name, manifest.dir);
      applyMigrations(db, manifest.name, pending);
      if (pending.length)
        log.info({ module: manifest.name, migrations: pending.map((m) => m.id) }, 'migrations applied');
      instance = new ModuleInstance(manifest, def, this.deps.kernel);
      instance.register();
      return { instance, migrated: pending.length > 0 };
    };
    try {
      // A migration that opts out of its transaction (PRAGMA foreign_keys) cannot run inside one.
      if (withBusyWait(db, () => needsNoTransaction(pendingMigrations(db, manifest.name, manifest.dir))))
        return withBusyWait(db, apply);
      return await store.tx(async () => apply());
    } catch (err) {
      await instance?.stop();
      throw err;
    }
  }

  /**
   * On PostgreSQL: the module's migrations in their own transaction under the migration lock (migratePostgres), then
   * register(). register() does no I/O, so it cannot join that transaction; a module whose register() fails keeps the
   * migrations it applied (they are additive), where SQLite rolls them back with it.
   */
  private async stagePostgres(
    manifest: Manifest,
    def: DefinedModule,
  ): Promise<{ instance: ModuleInstance; migrated: boolean }> {
    const { store, log } = this.deps.kernel;
    const applied = await migratePostgres(store, manifest.name, manifest.dir);
    if (applied.length) log.info({ module: manifest.name, migrations: applied }, 'migrations applied');
    const instance = new ModuleInstance(manifest, def, this.deps.kernel);
    try {
      instance.register();
    } catch (err) {
      await instance.stop();
      throw err;
    }
    return { instance, migrated: applied.length > 0 };
  }

  /** Whether a module has migrations not applied yet (a security module's reload must not bring one). */
  private async hasPending(manifest: Manifest): Promise<boolean> {
    const { store, database } = this.deps.kernel;
    if (store.dialect === 'postgres') return (await pendingPostgres(store, manifest.name, manifest.dir)).length > 0;
    return pendingMigrations(database, manifest.name, manifest.dir).length > 0;
  }

  /** The next generation (see draft); one prepared for `replacing` (see prewarm) only needs its routes added. */
  async generation(replacing?: ModuleInstance, leaving: ReadonlySet<string> = new Set()): Promise<Generation> {
    const warm = this.warm;
    this.warm = undefined;
    const draft = replacing && !replacing.parts.http && warm?.module === replacing.id ? await warm.draft : undefined;
    if (!draft) return (await this.draft(replacing, leaving)).finish();
    await draft.add(replacing!);
    return draft.finish();
  }

  /**
   * Dev mode: the module just reloaded will likely change again; draft everything else in the background, a turn later.
   */
  private prewarm(module: ModuleInstance): void {
    if (!this.deps.prewarm || module.parts.http) return;
    const draft = nextTurn()
      .then(() => this.draft(undefined, new Set([module.id])))
      .catch(() => undefined);
    this.warm = { module: module.id, draft };
  }

  /** A draft of the running modules, with `replacing` in place of its predecessor and without `leaving`. */
  private draft(replacing?: ModuleInstance, leaving: ReadonlySet<string> = new Set()): Promise<Draft> {
    const live = this.running().filter((i) => i.id !== replacing?.id && !leaving.has(i.id));
    if (replacing) live.push(replacing);
    live.sort((a, b) => this.order.indexOf(a.id) - this.order.indexOf(b.id));
    const { log, hooks } = this.deps.kernel;
    return Draft.begin(live, {
      log,
      hooks,
      bodyLimit: this.deps.settings().max_request_body_bytes,
      trustedProxies: this.deps.settings().trusted_proxies,
      newcomer: replacing?.id,
    });
  }

  /** Makes a generation live; the previous one drains, then `after` runs (stopping what it replaced). */
  private swap(generation: Generation, closeModules: ReadonlySet<string>, after?: () => Promise<void>): void {
    this.routeTable = generation.routes;
    const retired = this.deps.front.swap(generation, closeModules).drained.then(after);
    this.retiring.add(retired);
    void retired.finally(() => this.retiring.delete(retired));
  }

  async settled(): Promise<void> {
    await Promise.allSettled(this.retiring);
    await this.warm?.draft;
  }

  /** Registers, then starts, the modules in dependency order; `defs` holds the code of those that loaded. */
  async boot(defs: Map<string, DefinedModule | Error>): Promise<void> {
    for (const rec of this.inOrder()) {
      const def = defs.get(rec.manifest.name);
      if (def instanceof Error) this.fail(rec, def);
      else if (def && this.dependenciesUp(rec)) {
        try {
          rec.instance = (await this.stage(rec.manifest, def)).instance;
          rec.instance.commit();
        } catch (err) {
          this.fail(rec, err);
        }
      }
    }
    for (const rec of this.inOrder()) {
      if (!rec.instance) continue;
      if (!this.dependenciesUp(rec)) {
        await this.drop(rec, 'blocked');
        continue;
      }
      try {
        await rec.instance.start();
        rec.instance.begin();
        this.loaded(rec);
      } catch (err) {
        await this.drop(rec, 'failed');
        this.fail(rec, err);
      }
    }
  }

  /** The first generation; a module whose routes fail is left out (or start-up stops, for a security module). */
  async serve(): Promise<void> {
    for (;;) {
      try {
        this.swap(await this.generation(), new Set());
        this.booting = false;
        return;
      } catch (err) {
        const rec = err instanceof RouteBuildError ? this.records.get(err.module) : undefined;
        if (!rec?.instance) throw err;
        await this.drop(rec, 'failed');
        this.fail(rec, err);
      }
    }
  }

  /**
   * Replaces a module's copy (or starts a new one), all or nothing; after a new migration a failure stops the module.
   */
  async replace(
    rec: ModuleRecord,
    load: () => Promise<{ manifest: Manifest; def: DefinedModule }>,
  ): Promise<ReloadOutcome> {
    const started = performance.now();
    const old = rec.instance;
    let next: ModuleInstance | undefined;
    let migrated = false;
    try {
      const { manifest, def } = await load();
      // Each step on its own turn of the event loop: requests to other modules go on between them.
      await nextTurn();
      if (manifest.critical && old && (await this.hasPending(manifest))) {
        throw new Error(
          `module '${manifest.name}' is a security module and its change brings a new migration: ` +
            'restart the service to apply it',
        );
      }
      ({ instance: next, migrated } = await this.stage(manifest, def));
      await next.start();
      await nextTurn();
      const generation = await this.generation(next);
      // The old copy's background work ends before the new copy's begins (it keeps answering requests until the swap).
      await old?.retireWork();
      // One step: the old copy's taps go, the new copy's services and taps come, the generation switches.
      old?.detach();
      next.commit();
      Object.assign(rec, { manifest, instance: next, state: 'running', error: undefined });
      this.swap(
        generation,
        new Set([manifest.name]),
        async () => old && this.stopped(old, { ...this.info(rec), state: 'stopped' }),
      );
      next.begin();
      this.reloads++;
      this.loaded(rec);
      this.prewarm(next);
      return this.outcome(rec, started, !old);
    } catch (err) {
      await next?.stop();
      const outcome = this.outcome(rec, started, !old, err);
      if (migrated && old)
        await this.remove(
          rec.manifest.name,
          `its new migration was applied but the new version failed: ${outcome.error}`,
        );
      return outcome;
    }
  }

  /** `first`: the module was not running before (a folder added at run time): it was loaded, not reloaded. */
  private outcome(rec: ModuleRecord, started: number, first: boolean, err?: unknown): ReloadOutcome {
    const ms = Math.round(performance.now() - started);
    const location = err ? locate(err, rec.manifest.dir) : undefined;
    rec.lastReload = {
      at: new Date().toISOString(),
      ok: !err,
      ms,
      ...(err ? { error: (err as Error).message, location } : {}),
    };
    const { log } = this.deps.kernel;
    const module = rec.manifest.name;
    const kept = rec.instance ? 'the previous version keeps serving' : 'the module is not running';
    const what = first ? 'load' : 'reload';
    if (!err) log.info({ module, ms }, `module '${module}' ${what}ed`);
    else
      log.error(
        { module, err: location ? undefined : err, location },
        `module '${module}' ${what} failed; ${kept}: ${rec.lastReload.error}`,
      );
    return rec.lastReload;
  }

  /**
   * Stops a module and every running module that hard-depends on it (those become blocked). `forget`: its folder is
   * gone, the module is forgotten.
   */
  async remove(name: string, reason: string, forget = false): Promise<string[]> {
    const gone = await this.switch([{ name, state: 'failed', reason }]);
    this.deps.kernel.log.warn({ stopped: gone }, `module '${name}' stopped: ${reason}`);
    if (forget) this.records.delete(name);
    if (forget) this.order = this.order.filter((n) => n !== name);
    return gone;
  }

  /**
   * Brings the running modules in line with `wanted` (the configuration's choice), in one step (see switch): a module
   * switched on starts with the blocked modules that were waiting for it; one switched off stops with its dependants.
   * Modules that change state without running (not yet able to start, or not running anyway) are marked after it.
   */
  async match(
    wanted: (m: Manifest) => boolean,
    load: (rec: ModuleRecord) => Promise<DefinedModule>,
  ): Promise<string[]> {
    const leaving: Leaving[] = [];
    const marks: Array<[ModuleRecord, Partial<ModuleRecord>]> = [];
    for (const rec of this.inOrder()) {
      if (wanted(rec.manifest) || rec.state === 'disabled') continue;
      if (rec.instance)
        leaving.push({ name: rec.manifest.name, state: 'disabled', reason: 'disabled in configuration' });
      else marks.push([rec, { state: 'disabled', error: 'disabled in configuration' }]);
    }
    const gone = new Set(leaving.flatMap((l) => [...this.dependantsOf(l.name)]));
    const arriving: ModuleRecord[] = [];
    const up = (name: string) => {
      const dep = this.records.get(name);
      return Boolean(dep && ((dep.instance && !gone.has(name)) || arriving.includes(dep)));
    };
    for (const rec of this.inOrder()) {
      if (rec.instance || !wanted(rec.manifest) || (rec.state !== 'disabled' && rec.state !== 'blocked')) continue;
      const down = rec.manifest.depends.find((dep) => !up(dep));
      if (down === undefined) arriving.push(rec);
      else if (rec.state === 'disabled')
        marks.push([
          rec,
          { state: 'blocked', error: `depends on '${down}', which is ${this.records.get(down)?.state ?? 'missing'}` },
        ]);
    }
    const changed = await this.switch(leaving, arriving, load);
    for (const [rec, mark] of marks) Object.assign(rec, mark);
    return [...changed, ...marks.map(([rec]) => rec.manifest.name)];
  }

  /**
   * Stops `leaving` with every running module that hard-depends on them (those become blocked) and starts `arriving`
   * (in dependency order), all or nothing: the arrivals are staged and started, one generation without the first and
   * with the second is built, the leavers' background work retires, then everything switches in one step. A failure
   * stops what was staged and changes nothing. Returns the modules whose state changed.
   */
  async switch(
    leaving: Leaving[],
    arriving: ModuleRecord[] = [],
    load?: (rec: ModuleRecord) => Promise<DefinedModule>,
  ): Promise<string[]> {
    // Each stopping module with the leaver that takes it down (itself, or one it depends on).
    const causes = new Map<string, Leaving>();
    for (const l of leaving)
      for (const name of this.dependantsOf(l.name)) if (!causes.has(name) || name === l.name) causes.set(name, l);
    const gone = new Set(causes.keys());
    const stopping = this.running().filter((i) => gone.has(i.id));
    const staged: ModuleRecord[] = [];
    try {
      for (const rec of arriving) {
        const { instance } = await this.stage(rec.manifest, await load!(rec));
        rec.instance = instance;
        staged.push(rec);
        // Later arrivals may use its services in their register(); its taps wait for the commit below.
        instance.publish();
        await instance.start();
      }
      const generation = await this.generation(undefined, gone);
      await Promise.all(stopping.map((i) => i.retireWork()));
      const infos = stopping.map((i) => this.leave(this.records.get(i.id)!, causes.get(i.id)!));
      this.swap(generation, gone, async () => {
        for (let i = stopping.length - 1; i >= 0; i--) await this.stopped(stopping[i], infos[i]);
      });
      for (const rec of arriving) {
        rec.instance!.commit();
        rec.instance!.begin();
        rec.error = undefined;
        this.loaded(rec);
      }
      return [...gone, ...arriving.map((r) => r.manifest.name)];
    } catch (err) {
      for (const rec of staged.reverse()) await rec.instance!.stop();
      for (const rec of staged) rec.instance = undefined;
      throw err;
    }
  }

  /** Takes a stopping module out: the leaver gets its own state, a dependant is blocked by it. */
  private leave(rec: ModuleRecord, cause: Leaving): ModuleInfo {
    rec.instance!.detach();
    const own = cause.name === rec.manifest.name;
    const why = cause.state === 'disabled' ? 'which is disabled' : `which was stopped: ${cause.reason}`;
    Object.assign(rec, {
      instance: undefined,
      state: own ? cause.state : 'blocked',
      error: own ? cause.reason : `depends on '${cause.name}', ${why}`,
    });
    return this.info(rec);
  }

  readonly running = (): ModuleInstance[] => this.inOrder().flatMap((r) => (r.instance ? [r.instance] : []));
  private readonly inOrder = (): ModuleRecord[] => this.order.flatMap((n) => this.records.get(n) ?? []);

  info({ manifest: m, state, error, lastReload }: ModuleRecord): ModuleInfo {
    const dependants = [...this.dependantsOf(m.name, false)].filter((n) => n !== m.name);
    return {
      id: m.name,
      version: m.version,
      description: m.description,
      state,
      error,
      critical: m.critical,
      depends: m.depends,
      optionalDepends: m.optional_depends,
      dependants,
      contributes: m.contributes,
      dir: m.dir,
      thirdParty: m.thirdParty,
      lastReload,
    };
  }

  dependenciesUp(rec: ModuleRecord): boolean {
    const down = rec.manifest.depends.find((dep) => !this.records.get(dep)?.instance);
    if (down === undefined) return true;
    const d = this.records.get(down);
    this.fail(rec, new Error(`depends on '${down}', which ${d ? `is ${d.state}` : 'is missing'}`), 'blocked');
    return false;
  }

  /** Marks a module failed (or blocked); start-up stops for a security module or under the abort policy. */
  fail(rec: ModuleRecord, err: unknown, state: 'failed' | 'blocked' = 'failed'): void {
    rec.state = state;
    rec.error = (err as Error).message;
    const location = locate(err, rec.manifest.dir);
    const module = rec.manifest.name;
    this.deps.kernel.log.error(
      { module, err: location || state === 'blocked' ? undefined : err, location },
      `module '${module}' not started: ${rec.error}`,
    );
    if (!this.booting) return;
    // A module that finds its configuration invalid stops start-up like the kernel does (exit code 2).
    if (isConfigError(err)) throw err;
    // A database migrated by a newer version: this node must not run against a schema it does not know.
    if (err instanceof SchemaTooNew) throw new BootAbort(`module '${rec.manifest.name}': ${err.message}`);
    if (rec.manifest.critical)
      throw new BootAbort(`security module '${rec.manifest.name}' failed to start: ${rec.error}`);
    if (this.deps.settings().startup.on_boot_failure === 'abort')
      throw new BootAbort(
        `module '${rec.manifest.name}' failed to start and [startup] on_boot_failure = "abort": ${rec.error}`,
      );
  }

  async drop(rec: ModuleRecord, state: ModuleInfo['state']): Promise<void> {
    const instance = rec.instance;
    Object.assign(rec, { instance: undefined, state });
    if (instance) await this.stopped(instance, this.info(rec));
  }

  private loaded(rec: ModuleRecord): void {
    rec.state = 'running';
    this.deps.kernel.hooks.kernel.module.loaded.call(this.info(rec));
  }

  private async stopped(instance: ModuleInstance, info: ModuleInfo): Promise<void> {
    await instance.stop();
    this.deps.kernel.hooks.kernel.module.unloaded.call(info);
  }

  /** The module and every module that hard-depends on it, directly or not; `running`: only those running. */
  dependantsOf(name: string, running = true): Set<string> {
    const gone = new Set([name]);
    // A Set's iteration also visits what is added meanwhile.
    for (const n of gone)
      for (const { manifest: m, instance } of this.records.values())
        if ((instance || !running) && m.depends.includes(n)) gone.add(m.name);
    return gone;
  }
}

/**
 * Where in the module's own files an error is (GET /api/modules `location`): what the error says (a compile error, a
 * migration, an import), else the first stack frame inside the module's folder, its cause's included. Never the kernel.
 */
function locate(err: unknown, moduleDir: string): string | undefined {
  for (let e = err as (Error & { location?: string }) | undefined; e; e = e.cause as typeof e) {
    if (e.location) return e.location;
    const frames = e.stack?.split('\n').map((line) => /(\/[^\s()]+:\d+:\d+)/.exec(line)?.[1]) ?? [];
    const own = frames.find((at) => at?.startsWith(moduleDir + path.sep));
    if (own) return own;
  }
  return undefined;
}

/**
 * Raw statements outside the store wait for another process's lock the SQLite way (blocking; at boot and reload only).
 */
function withBusyWait<T>(db: Database, work: () => T): T {
  db.pragma('busy_timeout = 5000');
  try {
    return work();
  } finally {
    db.pragma('busy_timeout = 0');
  }
}

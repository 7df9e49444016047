import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { isConfigError, type DefinedModule, type ModuleInfo, type ReloadOutcome, type RouteInfo } from '@talon/module-sdk';
import { applyMigrations, needsNoTransaction, pendingMigrations } from './migrations.ts';
import type { HookBus } from './hooks.ts';
import { ModuleInstance, type InstanceDeps } from './loader/instance.ts';
import { ModuleBuildError } from './loader/bundle.ts';
import type { Manifest } from './loader/manifest.ts';
import { buildGeneration, Draft, nextTurn, RouteBuildError, type Generation, type GenerationOptions } from './http/generation.ts';
import type { FrontServer } from './http/front.ts';

export interface ModuleRecord {
  manifest: Manifest;
  state: ModuleInfo['state'];
  error?: string;
  instance?: ModuleInstance;
  lastReload?: ReloadOutcome;
}

/** Start-up stops: a security module failed, or `[startup] on_boot_failure = "abort"`. */
export class BootAbort extends Error {
  override name = 'BootAbort';
}

export interface SupervisorDeps {
  db: () => Database;
  log: () => Logger;
  hooks: HookBus;
  front: FrontServer;
  instanceDeps: () => InstanceDeps;
  generationOptions: () => { bodyLimit: number };
  abortOnFailure: () => boolean;
  /** Dev mode: after a module's reload, draft the generation for its next change (see prewarm). */
  prewarm: boolean;
}

/**
 * Runs modules through their lifecycle. One sequence, written once: stage (migrations and
 * register, in a savepoint), start, build the HTTP generation, commit (services, taps and
 * generation become visible in one step). Boot commits each module as it registers (nothing
 * serves yet); a reload commits only when everything of the new copy has succeeded.
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

  // ------------------------------------------------------------------ steps

  /** Migrations and register(); a synchronous failure rolls the migrations back. */
  async stage(manifest: Manifest, def: DefinedModule): Promise<{ instance: ModuleInstance; migrated: boolean }> {
    const db = this.deps.db();
    const pending = pendingMigrations(db, manifest.name, manifest.dir);
    const savepoint = !needsNoTransaction(pending);
    if (savepoint) db.exec('SAVEPOINT kernel_stage');
    let instance: ModuleInstance | undefined;
    try {
      applyMigrations(db, manifest.name, pending);
      instance = new ModuleInstance(manifest, def, this.deps.instanceDeps());
      instance.register();
      if (savepoint) db.exec('RELEASE kernel_stage');
      return { instance, migrated: pending.length > 0 };
    } catch (err) {
      if (savepoint) db.exec('ROLLBACK TO kernel_stage; RELEASE kernel_stage');
      await instance?.stop();
      throw err;
    }
  }

  /**
   * Builds an HTTP generation from the running modules, with `replacing` in place of its predecessor
   * and without `leaving`. A draft prepared for `replacing` (see prewarm) only needs its routes added.
   */
  async generation(replacing?: ModuleInstance, leaving: ReadonlySet<string> = new Set()): Promise<Generation> {
    const warm = this.warm;
    this.warm = undefined;
    const draft = replacing && !replacing.parts.http && warm?.module === replacing.id ? await warm.draft : undefined;
    if (!draft) return buildGeneration(this.live(replacing, leaving), this.generationOptions());
    await draft.add(replacing!);
    return draft.finish();
  }

  /**
   * Dev mode: a module that was just reloaded is likely to change again. A draft of the next generation
   * with everything but that module is built now, in the background, so that its next reload only adds
   * its own routes. Any other change of the module set makes the draft stale (generation() drops it).
   */
  private prewarm(module: ModuleInstance): void {
    if (!this.deps.prewarm || module.parts.http) return;
    // Begun on a later turn of the event loop: the requests that came in during the swap are answered first.
    const draft = nextTurn()
      .then(() => Draft.begin(this.live(undefined, new Set([module.id])), this.generationOptions()))
      .catch(() => undefined);
    this.warm = { module: module.id, draft };
  }

  private live(replacing?: ModuleInstance, leaving: ReadonlySet<string> = new Set()): ModuleInstance[] {
    const live = this.running().filter((i) => i.id !== replacing?.id && !leaving.has(i.id));
    if (replacing) live.push(replacing);
    return live.sort((a, b) => this.order.indexOf(a.id) - this.order.indexOf(b.id));
  }

  private generationOptions(): GenerationOptions {
    return { log: this.deps.log(), hooks: this.deps.hooks, ...this.deps.generationOptions() };
  }

  /** Makes a generation live; the previous one drains, then `after` runs (stopping what it replaced). */
  swap(generation: Generation, closeModules: ReadonlySet<string>, after?: () => Promise<void>): void {
    this.routeTable = generation.routes;
    const retired = this.deps.front.swap(generation, closeModules).drained.then(after);
    this.retiring.add(retired);
    void retired.finally(() => this.retiring.delete(retired));
  }

  async settled(): Promise<void> {
    await Promise.allSettled(this.retiring);
    await this.warm?.draft;
  }

  // ------------------------------------------------------------------ boot

  /** Registers and starts the modules in dependency order; `defs` holds the code of those that loaded. */
  async boot(defs: Map<string, DefinedModule | Error>): Promise<void> {
    for (const name of this.order) {
      const rec = this.records.get(name)!;
      const def = defs.get(name);
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
    for (const name of this.order) await this.startAtBoot(this.records.get(name)!);
  }

  private async startAtBoot(rec: ModuleRecord): Promise<void> {
    if (!rec.instance) return;
    if (!this.dependenciesUp(rec)) return this.drop(rec, 'blocked');
    try {
      await rec.instance.start();
      rec.state = 'running';
      this.deps.hooks.kernel.module.loaded.call(this.info(rec));
    } catch (err) {
      await this.drop(rec, 'failed');
      this.fail(rec, err);
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

  // ------------------------------------------------------------------ reload

  /**
   * Replaces a running module with its changed code (or starts a new one). All or nothing: on any
   * failure nothing of the new copy was visible and the old one serves exactly as before — except
   * after a new migration, which the old code does not know: then the module is stopped and failed.
   */
  async replace(rec: ModuleRecord, load: () => Promise<{ manifest: Manifest; def: DefinedModule }>): Promise<ReloadOutcome> {
    const started = performance.now();
    const old = rec.instance;
    let next: ModuleInstance | undefined;
    let migrated = false;
    try {
      const { manifest, def } = await load();
      // Each step on its own turn of the event loop: requests to other modules go on between them.
      await nextTurn();
      if (manifest.critical && old && pendingMigrations(this.deps.db(), manifest.name, manifest.dir).length) {
        throw new Error(`module '${manifest.name}' is a security module and its change brings a new migration: restart the service to apply it`);
      }
      ({ instance: next, migrated } = await this.stage(manifest, def));
      await next.start();
      await nextTurn();
      const generation = await this.generation(next);
      this.commit(rec, manifest, next, old, generation);
      return this.outcome(rec, started);
    } catch (err) {
      await next?.stop();
      const outcome = this.outcome(rec, started, err);
      if (migrated && old) await this.remove(rec.manifest.name, `its new migration was applied but the new version failed: ${outcome.error}`);
      return outcome;
    }
  }

  private commit(rec: ModuleRecord, manifest: Manifest, next: ModuleInstance, old: ModuleInstance | undefined, generation: Generation): void {
    // One step: the old copy's taps go, the new copy's services and taps come, the generation switches.
    old?.detach();
    next.commit();
    Object.assign(rec, { manifest, instance: next, state: 'running', error: undefined });
    this.swap(generation, new Set([manifest.name]), async () => {
      if (!old) return;
      await old.stop();
      this.deps.hooks.kernel.module.unloaded.call({ ...this.info(rec), state: 'stopped' });
    });
    this.reloads++;
    this.deps.hooks.kernel.module.loaded.call(this.info(rec));
    this.prewarm(next);
  }

  private outcome(rec: ModuleRecord, started: number, err?: unknown): ReloadOutcome {
    const ms = Math.round(performance.now() - started);
    const location = err ? ((err as ModuleBuildError).location ?? sourceLocation(err)) : undefined;
    rec.lastReload = { at: new Date().toISOString(), ok: !err, ms, ...(err ? { error: (err as Error).message, location } : {}) };
    const log = this.deps.log();
    if (!err) log.info({ ms }, `module '${rec.manifest.name}' reloaded`);
    else {
      const kept = rec.instance ? 'the previous version keeps serving' : 'the module is not running';
      log.error(
        { err: err instanceof ModuleBuildError ? undefined : err, location },
        `module '${rec.manifest.name}' reload failed; ${kept}: ${(err as Error).message}`,
      );
    }
    return rec.lastReload;
  }

  /** Stops a module and every running module that hard-depends on it (those become blocked). */
  async remove(name: string, reason: string): Promise<string[]> {
    const gone = this.dependantsOf(name);
    const leaving = this.running().filter((i) => gone.has(i.id));
    const generation = await this.generation(undefined, gone);
    for (const instance of leaving) instance.detach();
    const infos = leaving.map((i) => {
      const rec = this.records.get(i.id)!;
      Object.assign(rec, {
        instance: undefined,
        state: i.id === name ? 'failed' : 'blocked',
        error: i.id === name ? reason : `depends on '${name}', which was stopped: ${reason}`,
      });
      return this.info(rec);
    });
    this.swap(generation, gone, async () => {
      for (const [i, instance] of [...leaving.entries()].reverse()) {
        await instance.stop();
        this.deps.hooks.kernel.module.unloaded.call(infos[i]);
      }
    });
    this.deps.log().warn({ stopped: [...gone] }, `module '${name}' stopped: ${reason}`);
    return [...gone];
  }

  // ------------------------------------------------------------------ state

  running(): ModuleInstance[] {
    return this.order.map((n) => this.records.get(n)?.instance).filter((i): i is ModuleInstance => !!i);
  }

  info(rec: ModuleRecord): ModuleInfo {
    const m = rec.manifest;
    return {
      id: m.name,
      version: m.version,
      description: m.description,
      state: rec.state,
      error: rec.error,
      critical: m.critical,
      depends: m.depends,
      optionalDepends: m.optional_depends,
      dir: m.dir,
      thirdParty: m.thirdParty,
      lastReload: rec.lastReload,
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
    const location = (err as ModuleBuildError).location;
    this.deps.log().error({ err: location || state === 'blocked' ? undefined : err, location }, `module '${rec.manifest.name}' not started: ${rec.error}`);
    if (!this.booting) return;
    // A module that finds its configuration invalid stops start-up like the kernel does (exit code 2).
    if (isConfigError(err)) throw err;
    if (rec.manifest.critical) throw new BootAbort(`security module '${rec.manifest.name}' failed to start: ${rec.error}`);
    if (this.deps.abortOnFailure()) throw new BootAbort(`module '${rec.manifest.name}' failed to start and [startup] on_boot_failure = "abort": ${rec.error}`);
  }

  async drop(rec: ModuleRecord, state: ModuleInfo['state']): Promise<void> {
    const instance = rec.instance;
    rec.instance = undefined;
    rec.state = state;
    if (!instance) return;
    await instance.stop();
    this.deps.hooks.kernel.module.unloaded.call(this.info(rec));
  }

  private dependantsOf(name: string): Set<string> {
    const gone = new Set([name]);
    for (let grew = true; grew;) {
      grew = false;
      for (const rec of this.records.values()) {
        if (gone.has(rec.manifest.name) || !rec.instance || !rec.manifest.depends.some((d) => gone.has(d))) continue;
        gone.add(rec.manifest.name);
        grew = true;
      }
    }
    return gone;
  }
}

/** file:line:column of the first stack frame inside a module folder, for GET /api/modules. */
function sourceLocation(err: unknown): string | undefined {
  const frame = (err as Error)?.stack?.split('\n').find((l) => /\((\/[^)]+\.ts):\d+:\d+\)|at (\/\S+\.ts):\d+:\d+/.test(l));
  return frame ? /(\/[^\s()]+\.ts:\d+:\d+)/.exec(frame)?.[1] : undefined;
}

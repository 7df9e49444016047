import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { AwilixContainer } from 'awilix';
import { asValue } from 'awilix';
import type { DefinedModule, KernelApi, KernelSettings, ModuleContext, ServiceRef, TalonPaths, HookRef } from '@talon/module-sdk';
import type { HookBus } from '../hooks.ts';
import { TapLedger } from '../hooks.ts';
import type { ServiceRegistry } from '../services.ts';
import type { Manifest } from './manifest.ts';

let nextSeq = 1;

export interface InstanceDeps {
  root: AwilixContainer;
  db: Database;
  log: Logger;
  paths: TalonPaths;
  hooks: HookBus;
  services: ServiceRegistry;
  kernel: KernelApi;
  settings: () => KernelSettings;
  section: (name: string) => Record<string, unknown>;
}

/** One loaded copy of a module: its context, taps, timers and services. */
export class ModuleInstance {
  readonly seq = nextSeq++;
  readonly ctx: ModuleContext;
  readonly log: Logger;
  private readonly taps: TapLedger;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopFns: Array<() => unknown> = [];
  private readonly scope: AwilixContainer;
  private started = false;

  constructor(
    readonly manifest: Manifest,
    readonly def: DefinedModule,
    private readonly deps: InstanceDeps,
  ) {
    const id = manifest.name;
    this.log = deps.log.child({ module: id });
    this.taps = new TapLedger(`${id}#${this.seq}`, this.log);
    this.scope = deps.root.createScope();
    this.scope.register({ moduleId: asValue(id), log: asValue(this.log) });
    const section = manifest.config_section;
    const self = this;
    const ownerOf = (ref: HookRef<object>) => ref.id.split('.')[0];
    this.ctx = {
      id,
      version: manifest.version,
      dir: manifest.dir,
      get config() {
        return section ? deps.section(section) : {};
      },
      get settings() {
        return deps.settings();
      },
      log: this.log,
      db: deps.db,
      paths: deps.paths,
      container: this.scope,
      kernel: deps.kernel,
      hooks: {
        kernel: this.taps.facade(deps.hooks.kernel),
        tap: (ref) => {
          const catalogue = deps.hooks.catalogue(ref.id);
          if (!catalogue) throw new Error(`module '${id}' taps hooks '${ref.id}', but module '${ownerOf(ref)}' that owns them is not loaded`);
          return this.taps.facade(catalogue) as never;
        },
        tryTap: (ref) => {
          const catalogue = deps.hooks.catalogue(ref.id);
          return catalogue ? (this.taps.facade(catalogue) as never) : undefined;
        },
        get: (ref) => {
          const catalogue = deps.hooks.catalogue(ref.id);
          if (!catalogue) throw new Error(`hooks '${ref.id}' are not available (module '${ownerOf(ref)}' is not loaded)`);
          return catalogue as never;
        },
      },
      provide<T>(ref: ServiceRef<T>, value: T, dispose?: (value: T) => unknown) {
        deps.services.provide(ref, self.seq, value as object, dispose as (v: never) => unknown);
        self.scope.register(ref.id.replace(/\W+/g, '_'), asValue(value));
      },
      use<T extends object>(ref: ServiceRef<T>): T {
        if (!deps.services.has(ref.id)) throw new Error(`module '${id}' uses service '${ref.id}', which no loaded module provides`);
        return deps.services.view<T>(ref.id);
      },
      tryUse<T extends object>(ref: ServiceRef<T>): T | undefined {
        return deps.services.has(ref.id) ? deps.services.view<T>(ref.id) : undefined;
      },
      onStop(fn) {
        self.stopFns.push(fn);
      },
      setInterval(fn, ms) {
        const t = setInterval(() => self.guard(fn), ms);
        self.timers.add(t);
        return t;
      },
      setTimeout(fn, ms) {
        const t = setTimeout(() => {
          self.timers.delete(t);
          self.guard(fn);
        }, ms);
        self.timers.add(t);
        return t;
      },
    };
  }

  get id(): string {
    return this.manifest.name;
  }

  tapCount(): number {
    return this.taps.count();
  }

  timerCount(): number {
    return this.timers.size;
  }

  register(): void {
    for (const ref of this.def.hooks ?? []) this.deps.hooks.own(ref);
    this.def.register?.(this.ctx);
  }

  async start(): Promise<void> {
    await this.def.start?.(this.ctx);
    this.started = true;
  }

  /** Removes the module's hook taps at once (a replacement may already be tapped). */
  detach(): void {
    this.taps.removeAll();
  }

  /** Stops the module and releases everything it holds. Never throws. */
  async stop(): Promise<void> {
    try {
      if (this.started) await this.def.stop?.(this.ctx);
    } catch (err) {
      this.log.error({ err }, 'module stop failed');
    }
    for (const fn of this.stopFns.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        this.log.error({ err }, 'module stop handler failed');
      }
    }
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.taps.removeAll();
    await this.deps.services.release(this.seq);
    await this.scope.dispose();
    this.started = false;
  }

  private guard(fn: () => unknown): void {
    try {
      const r = fn();
      if (r && typeof (r as Promise<unknown>).catch === 'function') (r as Promise<unknown>).catch((err) => this.log.error({ err }, 'timer callback failed'));
    } catch (err) {
      this.log.error({ err }, 'timer callback failed');
    }
  }
}

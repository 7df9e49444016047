import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
// awilix's build without loadModules (which loads fast-glob, most of awilix's start-up cost); the kernel registers explicitly.
import { asFunction, asValue, createContainer, InjectionMode, type AwilixContainer } from 'awilix/browser';
import type { DefinedModule, EventBus, HookRef, KernelApi, ModuleContext, ModuleParts, ServiceRef } from '@talon/module-sdk';
import { TapLedger, type HookBus } from '../hooks.ts';
import type { ServiceProvider, ServiceRegistry } from '../services.ts';
import { declares, ownerOf, type Manifest } from './manifest.ts';

let nextSeq = 1;

export interface InstanceDeps {
  db: Database;
  log: Logger;
  home: string;
  hooks: HookBus;
  events: EventBus;
  services: ServiceRegistry;
  kernel: KernelApi;
  /** The module's current configuration (section and claimed keys). */
  config: (m: Manifest) => Record<string, unknown>;
  /** Manifests of every known module, to name the owner in an error. */
  manifest: (name: string) => Manifest | undefined;
}

/** One loaded copy of a module: its context, container, taps, timers and running parts. */
export class ModuleInstance implements ServiceProvider {
  readonly seq = nextSeq++;
  readonly ctx: ModuleContext;
  readonly log: Logger;
  readonly container: AwilixContainer;
  parts: ModuleParts = {};
  private readonly taps: TapLedger;
  private readonly events: ReturnType<EventBus['scope']>;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopFns: Array<() => unknown> = [];
  private readonly provided: string[] = [];
  private started = false;

  constructor(
    readonly manifest: Manifest,
    readonly def: DefinedModule,
    private readonly deps: InstanceDeps,
  ) {
    this.log = deps.log.child({ module: this.id });
    this.taps = new TapLedger(`${this.id}#${this.seq}`, this.log);
    this.events = deps.events.scope(this.id);
    // One strict container per module (a scope of a shared root would share singleton caches by name).
    this.container = createContainer({ injectionMode: InjectionMode.PROXY, strict: true });
    this.container.register({ moduleId: asValue(this.id), log: asValue(this.log), db: asValue(deps.db), kernel: asValue(deps.kernel) });
    this.bridgeDeclaredServices();
    this.ctx = this.context();
  }

  get id(): string {
    return this.manifest.name;
  }

  service(id: string): object {
    return this.container.resolve<object>(id);
  }

  /** Runs the module's register(); nothing it offers is visible until commit(). */
  register(): void {
    for (const ref of this.def.hooks ?? []) this.deps.hooks.own(ref, this.id);
    this.parts = this.def.register?.(this.ctx) ?? {};
    const missing = this.manifest.provides.filter((id) => !this.provided.includes(id));
    if (missing.length) throw new Error(`module.toml lists provides ${missing.map((m) => `'${m}'`).join(', ')}, but register() did not provide it`);
  }

  async start(): Promise<void> {
    await this.parts.start?.();
    this.started = true;
  }

  /** Makes the instance's services and hook taps live. */
  commit(): void {
    this.deps.services.publish(this, this.provided);
    this.taps.commit();
    this.events.commit();
  }

  /** Takes the instance's hook taps away at once (its replacement commits in the same step). */
  detach(): void {
    this.taps.removeAll();
    this.events.close();
  }

  /** Stops the module and releases everything it holds. Never throws. */
  async stop(): Promise<void> {
    const attempt = async (what: string, fn: () => unknown) => {
      try {
        await fn();
      } catch (err) {
        this.log.error({ err }, `module ${what} failed`);
      }
    };
    if (this.started) await attempt('stop', () => this.parts.stop?.());
    for (const fn of this.stopFns.splice(0).reverse()) await attempt('stop handler', fn);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.taps.removeAll();
    this.events.close();
    this.deps.services.unpublish(this);
    // Runs the disposers of the services it provided.
    await attempt('dispose', () => this.container.dispose());
    this.started = false;
  }

  /** Each service of a declared connection resolves, in this module's container, to a live view. */
  private bridgeDeclaredServices(): void {
    for (const other of [...this.manifest.depends, ...this.manifest.optional_depends, ...this.manifest.consumes]) {
      const owner = this.deps.manifest(other.includes('.') ? ownerOf(other) : other);
      for (const id of owner?.provides ?? []) {
        if (declares(this.manifest, id)) this.container.register(id, asFunction(() => this.deps.services.view(id)).singleton());
      }
    }
  }

  private undeclared(kind: string, id: string): Error {
    const owner = ownerOf(id);
    const known = this.deps.manifest(owner);
    if (!known) return new Error(`module '${this.id}' uses ${kind} '${id}', but no module '${owner}' is installed`);
    if (kind === 'service' && !known.provides.includes(id))
      return new Error(`module '${this.id}' uses service '${id}', which module '${owner}' does not provide`);
    return new Error(
      `module '${this.id}' uses ${kind} '${id}' of module '${owner}' without declaring it: add '${owner}' to depends, optional_depends or consumes in ${path.join(this.manifest.dir, 'module.toml')}`,
    );
  }

  private use<T extends object>(ref: ServiceRef<T>, required: boolean): T | undefined {
    if (!declares(this.manifest, ref.id) || !this.container.hasRegistration(ref.id)) throw this.undeclared('service', ref.id);
    if (!this.deps.services.has(ref.id) && !this.provided.includes(ref.id)) {
      if (!required) return undefined;
      throw new Error(`module '${this.id}' uses service '${ref.id}', but module '${ownerOf(ref.id)}' is not running`);
    }
    return this.container.resolve<T>(ref.id);
  }

  private catalogue(ref: HookRef<object>, required: boolean): object | undefined {
    const found = this.deps.hooks.catalogue(ref.id);
    const owner = found?.owner ?? ownerOf(ref.id);
    if (owner !== this.id && !declares(this.manifest, `${owner}.hooks`)) throw this.undeclared('hooks', ref.id);
    if (!found && required) throw new Error(`module '${this.id}' uses hooks '${ref.id}', but module '${owner}' that owns them is not loaded`);
    return found?.hooks;
  }

  private context(): ModuleContext {
    const self = this;
    const { deps, manifest } = this;
    let dataDir: string | undefined;
    return {
      id: this.id,
      version: manifest.version,
      dir: manifest.dir,
      get config() {
        return deps.config(manifest);
      },
      log: this.log,
      db: deps.db,
      home: deps.home,
      get dataDir() {
        if (!dataDir) mkdirSync((dataDir = path.join(deps.home, 'data', self.id)), { recursive: true });
        return dataDir;
      },
      container: this.container,
      kernel: deps.kernel,
      events: { publish: this.events.publish, subscribe: this.events.subscribe },
      hooks: {
        kernel: this.taps.facade(deps.hooks.kernel),
        tap: (ref) => this.taps.facade(this.catalogue(ref, true)!) as never,
        tryTap: (ref) => {
          const catalogue = this.catalogue(ref, false);
          return catalogue ? (this.taps.facade(catalogue) as never) : undefined;
        },
        get: (ref) => this.catalogue(ref, true) as never,
      },
      provide<T>(ref: ServiceRef<T>, value: T, dispose?: (value: T) => unknown) {
        if (!manifest.provides.includes(ref.id)) throw new Error(`module '${self.id}' provides '${ref.id}', which its module.toml does not list in provides`);
        self.container.register(ref.id, asFunction(() => value as object, { dispose: dispose as (v: object) => unknown }).singleton());
        // Resolved once now, so the container's dispose() reaches it.
        self.container.resolve(ref.id);
        self.provided.push(ref.id);
      },
      use: (ref) => this.use(ref, true)!,
      tryUse: (ref) => this.use(ref, false),
      onStop: (fn) => void this.stopFns.push(fn),
      setInterval: (fn, ms) => this.track(setInterval(() => this.guard(fn), ms)),
      setTimeout: (fn, ms) => {
        const t = this.track(
          setTimeout(() => {
            this.timers.delete(t);
            this.guard(fn);
          }, ms),
        );
        return t;
      },
    };
  }

  private track(t: NodeJS.Timeout): NodeJS.Timeout {
    this.timers.add(t);
    return t;
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

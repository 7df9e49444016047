import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
// awilix's build without loadModules (which loads fast-glob, most of awilix's start-up cost); the kernel registers
// explicitly.
import { asFunction, asValue, createContainer, InjectionMode, type AwilixContainer } from 'awilix/browser';
import type {
  DefinedModule,
  HookRef,
  KernelApi,
  ModuleContext,
  ModuleParts,
  ServiceRef,
  Store,
} from '@talon/module-sdk';
import type { BusScope, EventBus } from '../events.ts';
import { TapLedger, type HookBus } from '../hooks.ts';
import type { ServiceProvider, ServiceRegistry } from '../services.ts';
import type { NodeRegistry } from '../store/nodes.ts';
import type { Feed } from '../store/feed.ts';
import { connections, declares, howToDeclare, ownerOf, type Manifest } from './manifest.ts';
import { moduleEvents } from './module-events.ts';

let nextSeq = 1;

/** What a module copy is made with: the kernel's parts; modules see only `api` (their `ctx.kernel`). */
export interface InstanceDeps {
  /** The frozen KernelApi object handed to modules: never the kernel itself. */
  readonly api: KernelApi;
  readonly database: Database;
  readonly store: Store;
  readonly nodes: NodeRegistry;
  readonly feed: Feed;
  readonly log: Logger;
  /** The node's own home (ctx.nodeHome) and the shared data directory (ctx.home; the same folder off a fleet). */
  readonly home: string;
  readonly dataHome: string;
  readonly hooks: HookBus;
  readonly events: EventBus;
  readonly services: ServiceRegistry;
  /** How long a retiring copy's tracked work may take to settle after its signal aborted (ms). */
  readonly settleMs: number;
  /** The module's current configuration (its section and the top-level keys it claims). */
  moduleConfig(m: Manifest): Record<string, unknown>;
  /** The manifest of any known module: what a connection provides, whom to name in an error. */
  manifest(name: string): Manifest | undefined;
}

/** One loaded copy of a module: its context, container, taps, timers and running parts. */
export class ModuleInstance implements ServiceProvider {
  readonly id: string;
  readonly ctx: ModuleContext;
  readonly log: Logger;
  readonly container: AwilixContainer;
  parts: ModuleParts = {};
  private readonly taps: TapLedger;
  private readonly events: BusScope;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopFns: Array<() => unknown> = [];
  private readonly afterStart: Array<() => void> = [];
  /** Aborted when the copy retires (ctx.signal); `work` is what it tracks meanwhile (ctx.track). */
  private readonly retire = new AbortController();
  private readonly work = new Set<Promise<unknown>>();
  private retiring?: Promise<void>;
  private started = false;

  constructor(
    readonly manifest: Manifest,
    readonly def: DefinedModule,
    private readonly deps: InstanceDeps,
  ) {
    this.id = manifest.name;
    this.log = deps.log.child({ module: this.id });
    this.taps = new TapLedger(`${this.id}#${nextSeq++}`, this.log);
    this.events = deps.events.scope(this.id);
    // Its own strict container: a scope of a shared root would share singleton caches by name.
    this.container = createContainer({ injectionMode: InjectionMode.PROXY, strict: true });
    this.container.register({
      moduleId: asValue(this.id),
      log: asValue(this.log),
      store: asValue(deps.store),
      kernel: asValue(deps.api),
    });
    // Every service of a declared connection, as a live view; an undeclared one has no registration.
    for (const other of connections(manifest)) {
      for (const id of deps.manifest(other)?.provides ?? [])
        if (declares(manifest, id)) this.container.register(id, asValue(deps.services.view(id)));
    }
    this.ctx = this.context();
  }

  readonly service = (id: string): object => this.container.resolve<object>(id);

  /** Runs the module's register(); nothing it offers is visible until commit(). */
  register(): void {
    for (const ref of this.def.hooks ?? []) this.deps.hooks.own(ref, this.id);
    for (const { owner, types } of this.def.events ?? []) {
      if (owner !== this.id)
        throw new Error(
          `module '${this.id}' lists events of module '${owner}' in defineModule({ events }): only its own`,
        );
      this.deps.events.own(owner, types);
    }
    this.parts = this.def.register?.(this.ctx) ?? {};
    const missing = this.manifest.provides.filter((id) => !this.container.hasRegistration(id));
    if (missing.length)
      throw new Error(
        `module.toml lists provides ${missing.map((m) => `'${m}'`).join(', ')}, but register() did not provide it`,
      );
  }

  async start(): Promise<void> {
    await this.parts.start?.();
    this.started = true;
    for (const fn of this.afterStart.splice(0)) fn();
  }

  private onceStarted(fn: () => void): void {
    if (this.started) fn();
    else this.afterStart.push(fn);
  }

  /** The copy is live: its background work (`run`) begins. */
  begin(): void {
    if (this.parts.run) void this.track(this.attempt('module run', () => this.parts.run!(this.retire.signal)));
  }

  /** Aborts the copy's signal, stops its timers and waits (bounded) for its tracked work, once. */
  readonly retireWork = (): Promise<void> => (this.retiring ??= this.settle());

  private async settle(): Promise<void> {
    this.retire.abort(new DOMException(`module '${this.id}' is stopping`, 'AbortError'));
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    if (!this.work.size) return;
    const { settleMs } = this.deps;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, settleMs, true)));
    const settled = await Promise.race([Promise.allSettled(this.work).then(() => false), late]);
    clearTimeout(timer);
    if (settled)
      this.log.warn(
        { pending: this.work.size },
        `tracked work did not settle within ${settleMs} ms of the stop signal; going on without it`,
      );
  }

  /** Tracked until it settles; a rejection is logged (work begun and left to run has nobody else to tell). */
  private track<T>(work: Promise<T>): Promise<T> {
    this.work.add(work);
    void work.then(
      () => this.work.delete(work),
      (err: unknown) => {
        this.work.delete(work);
        this.failed('tracked work', err);
      },
    );
    return work;
  }

  /** Makes the instance's services live (before its taps, when modules arrive together and use each other). */
  readonly publish = (): void => this.deps.services.publish(this, this.manifest.provides);

  /** Makes the instance's services, hook taps and event subscriptions live. */
  commit(): void {
    this.publish();
    this.taps.commit();
    this.events.commit();
  }

  /** Takes the instance's hook taps and subscriptions away at once (its replacement commits in the same step). */
  detach(): void {
    this.taps.removeAll();
    this.events.close();
  }

  /** Stops the module and releases everything it holds. Never throws. */
  async stop(): Promise<void> {
    await this.retireWork();
    if (this.started) await this.attempt('module stop', () => this.parts.stop?.());
    for (const fn of this.stopFns.splice(0).reverse()) await this.attempt('module stop handler', fn);
    this.detach();
    this.deps.services.unpublish(this);
    // Runs the disposers of the services it provided.
    await this.attempt('module dispose', () => this.container.dispose());
    this.started = false;
  }

  private async attempt(what: string, fn: () => unknown): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.failed(what, err);
    }
  }

  private failed(what: string, err: unknown): void {
    // Work that ends because its copy's signal aborted has not failed.
    if (this.retire.signal.aborted && (err as Error)?.name === 'AbortError') return;
    this.log.error({ err }, `${what} failed`);
  }

  /** A retired copy schedules nothing more: the timer is made, but never started. */
  private timer(repeat: boolean, fn: (signal: AbortSignal) => unknown, ms: number): NodeJS.Timeout {
    const run = () => {
      if (!repeat) this.timers.delete(t);
      void this.track(this.attempt('timer callback', () => fn(this.retire.signal)));
    };
    const t = repeat ? setInterval(run, ms) : setTimeout(run, ms);
    if (this.retire.signal.aborted) clearTimeout(t);
    else this.timers.add(t);
    return t;
  }

  private undeclared(kind: 'service' | 'hooks', id: string): Error {
    const owner = ownerOf(id);
    const known = this.deps.manifest(owner);
    const use = `module '${this.id}' uses ${kind} '${id}'`;
    if (!known) return new Error(`${use}, but no module '${owner}' is installed`);
    if (kind === 'service' && !known.provides.includes(id))
      return new Error(`${use}, which module '${owner}' does not provide`);
    return new Error(`${use} of module '${owner}' without declaring it: ${howToDeclare(this.manifest, owner)}`);
  }

  private use<T extends object>(ref: ServiceRef<T>, required: boolean): T | undefined {
    if (!declares(this.manifest, ref.id) || !this.container.hasRegistration(ref.id))
      throw this.undeclared('service', ref.id);
    // Its own services resolve from the start; another module's while that module is running.
    if (ownerOf(ref.id) === this.id || this.deps.services.has(ref.id)) return this.container.resolve<T>(ref.id);
    if (!required) return undefined;
    throw new Error(`module '${this.id}' uses service '${ref.id}', but module '${ownerOf(ref.id)}' is not running`);
  }

  private catalogue(ref: HookRef<object>, required: boolean): object | undefined {
    const found = this.deps.hooks.catalogue(ref.id);
    const owner = found?.owner ?? ownerOf(ref.id);
    if (owner !== this.id && !declares(this.manifest, `${owner}.hooks`)) throw this.undeclared('hooks', ref.id);
    if (!found && required)
      throw new Error(`module '${this.id}' uses hooks '${ref.id}', but module '${owner}' that owns them is not loaded`);
    return found?.hooks;
  }

  private context(): ModuleContext {
    const { id, deps, manifest, container } = this;
    const facade = (catalogue: object | undefined) => (catalogue ? this.taps.facade(catalogue) : undefined) as never;
    let dataDir: string | undefined;
    return {
      id,
      version: manifest.version,
      dir: manifest.dir,
      get config() {
        return deps.moduleConfig(manifest);
      },
      log: this.log,
      store: deps.store,
      nodes: {
        id: deps.nodes.id,
        leaseMs: deps.nodes.leaseMs,
        get active() {
          return deps.nodes.active;
        },
        live: () => deps.nodes.live(),
        address: (node) => deps.nodes.address(node),
        list: () => deps.nodes.list(),
        // Handed gone nodes only once this copy has started: a takeover needs the module's state loaded.
        onDead: (fn) =>
          this.onceStarted(() => this.stopFns.push(deps.nodes.onDead(fn, (work) => void this.track(work)))),
      },
      changes: {
        note: (topic, key = '', t) => deps.feed.note(id, topic, key, t),
        on: (topic, fn) => void this.stopFns.push(deps.feed.on(id, topic, fn)),
      },
      home: deps.dataHome,
      nodeHome: deps.home,
      get dataDir() {
        if (!dataDir) mkdirSync((dataDir = path.join(deps.dataHome, 'data', id)), { recursive: true });
        return dataDir;
      },
      container,
      kernel: deps.api,
      events: moduleEvents(this.events, manifest, this.def.events ?? []),
      hooks: {
        kernel: this.taps.facade(deps.hooks.kernel),
        tap: (ref) => facade(this.catalogue(ref, true)),
        tryTap: (ref) => facade(this.catalogue(ref, false)),
        get: (ref) => this.catalogue(ref, true) as never,
      },
      provide: (ref, value, dispose) => {
        if (!manifest.provides.includes(ref.id))
          throw new Error(`module '${id}' provides '${ref.id}', which its module.toml does not list in provides`);
        container.register(
          ref.id,
          asFunction(() => value as object, { dispose: dispose as (v: object) => unknown }).singleton(),
        );
        // Resolved once now, so the container's dispose() reaches it.
        container.resolve(ref.id);
      },
      use: (ref) => this.use(ref, true)!,
      tryUse: (ref) => this.use(ref, false),
      onStop: (fn) => void this.stopFns.push(fn),
      signal: this.retire.signal,
      track: (work) => this.track(work),
      setInterval: (fn, ms) => this.timer(true, fn, ms),
      setTimeout: (fn, ms) => this.timer(false, fn, ms),
    };
  }
}

import type { AsyncSeriesHook, SyncHook, SyncWaterfallHook } from 'tapable';

// Modules build their catalogues with these classes, so the whole service shares one copy of tapable.
export {
  AsyncParallelBailHook,
  AsyncParallelHook,
  AsyncSeriesBailHook,
  AsyncSeriesHook,
  AsyncSeriesLoopHook,
  AsyncSeriesWaterfallHook,
  SyncBailHook,
  SyncHook,
  SyncLoopHook,
  SyncWaterfallHook,
} from 'tapable';

/** Named stages, so taps order themselves without magic numbers. */
export const STAGE = { FIRST: -1000, GUARD: -100, DEFAULT: 0, OBSERVE: 100, LAST: 1000 } as const;

/** Outcome of a module's last hot reload (GET /api/modules). */
export interface ReloadOutcome {
  at: string;
  ok: boolean;
  ms: number;
  error?: string;
  /** file:line:column of the failure, when known. */
  location?: string;
}

export interface ModuleInfo {
  id: string;
  version: string;
  description: string;
  state: 'running' | 'failed' | 'blocked' | 'disabled' | 'stopped';
  error?: string;
  /** A security module: a boot failure stops start-up, a failed reload keeps the old version. */
  critical: boolean;
  depends: string[];
  optionalDepends: string[];
  /** Every known module that needs this one (hard dependencies, directly or not): what goes with it when it stops. */
  dependants: string[];
  /**
   * What the module declares for other modules' extension points: `[contributes.<owner>]` of its module.toml, by
   * owner. The owner reads the tables of its name from the running modules and checks them (see docs/modules.md,
   * Extension points).
   */
  contributes: Record<string, Record<string, unknown>>;
  dir: string;
  thirdParty: boolean;
  lastReload?: ReloadOutcome;
}

export interface ConfigChange {
  /** Dotted path of the changed key, or '' for a whole reload. */
  path: string;
  value: unknown;
  previous: unknown;
}

export interface HttpRequestEvent {
  id: string;
  method: string;
  url: string;
  route?: string;
  ip: string;
}

export interface HttpResponseEvent extends HttpRequestEvent {
  statusCode: number;
  durationMs: number;
  /** The route is a polled endpoint (route option `quiet`): the access log writes its line at debug level. */
  quiet: boolean;
  /** The module whose route answered (none for a request no route matched). */
  module?: string;
  /** The `error` of the answer's `{error}` body, for a 4xx or 5xx answer that has one (cut at 500 characters). */
  error?: string;
}

/**
 * The kernel's own hook catalogue, as modules see it (the kernel creates it). Modules add theirs with defineHooks.
 * - kernel.ready: once, after the service listens (not on hot reloads).
 * - kernel.shutdown: once, when a graceful stop begins (before modules stop).
 * - module.loaded / module.unloaded: a module started (at boot or swapped in by a reload) / stopped.
 * - config.changed: a value changed at run time (POST /api/config/set, reload).
 * - http.request / http.response: every request as it arrives / after its answer is sent.
 * - http.baseHeaders: headers every answer carries, also those the front server gives itself (400, 431, 503).
 * - log.line: every structured log line as JSON text (the logs module writes the file and the stream from it).
 */
export interface KernelHooks {
  readonly kernel: { readonly ready: AsyncSeriesHook<[]>; readonly shutdown: AsyncSeriesHook<[]> };
  readonly module: { readonly loaded: SyncHook<[ModuleInfo]>; readonly unloaded: SyncHook<[ModuleInfo]> };
  readonly config: { readonly changed: AsyncSeriesHook<[ConfigChange]> };
  readonly http: {
    readonly request: SyncHook<[HttpRequestEvent]>;
    readonly response: SyncHook<[HttpResponseEvent]>;
    readonly baseHeaders: SyncWaterfallHook<[Record<string, string>]>;
  };
  readonly log: { readonly line: SyncHook<[string]> };
}

/** An extension point catalogue owned by a module (e.g. the agents module's tool-call hooks). */
export interface HookRef<T> {
  readonly id: string;
  readonly create: () => T;
}

export function defineHooks<T extends object>(id: `${string}.${string}`, create: () => T): HookRef<T> {
  return Object.freeze({ id, create });
}

export function isHookRef(value: unknown): value is HookRef<object> {
  return (
    typeof value === 'object' && value !== null && typeof (value as HookRef<object>).id === 'string' && typeof (value as HookRef<object>).create === 'function'
  );
}

// tapable does not export its base Hook class, so hooks are told apart structurally:
// async hooks have tapPromise and no call(), sync hooks have call().
type AsyncHookLike = { tapPromise: unknown; promise(...args: never[]): Promise<unknown> };
type SyncHookLike = { call(...args: never[]): unknown };
type AnyHook = AsyncHookLike | SyncHookLike;
type AsyncArgs<H> = H extends { promise(...args: infer A): Promise<unknown> } ? A : never;
type AsyncResult<H> = H extends { promise(...args: never[]): Promise<infer R> } ? R : never;
type SyncArgs<H> = H extends { call(...args: infer A): unknown } ? A : never;
type SyncResult<H> = H extends { call(...args: never[]): infer R } ? R : never;

export interface TapOptions {
  stage?: number;
}

/** Tapping a synchronous hook: only `tap` (tapPromise on a sync hook is a compile error). */
export interface SyncTap<H> {
  tap(label: string, fn: (...args: SyncArgs<H>) => SyncResult<H> | undefined, options?: TapOptions): void;
}

/** Tapping an asynchronous hook. */
export interface AsyncTap<H> {
  tap(label: string, fn: (...args: AsyncArgs<H>) => AsyncResult<H> | undefined, options?: TapOptions): void;
  tapPromise(label: string, fn: (...args: AsyncArgs<H>) => Promise<AsyncResult<H> | undefined>, options?: TapOptions): void;
}

export type HookTap<H> = H extends AsyncHookLike ? AsyncTap<H> : SyncTap<H>;

/** A catalogue seen through a module's eyes: taps are named after the module and removed when it unloads. */
export type TapFacade<T> = {
  readonly [K in keyof T]: T[K] extends AnyHook ? HookTap<T[K]> : TapFacade<T[K]>;
};

export interface HookAccess {
  /** The kernel's catalogue, for tapping. */
  readonly kernel: TapFacade<KernelHooks>;
  /** Tap a module-owned catalogue (declare its owner in module.toml). Throws when its owner is not loaded. */
  tap<T extends object>(ref: HookRef<T>): TapFacade<T>;
  /** Like tap, but undefined when the owner is not loaded (optional dependency). */
  tryTap<T extends object>(ref: HookRef<T>): TapFacade<T> | undefined;
  /** The raw hooks of a catalogue, for calling them: the owner's own, or a declared connection's. */
  get<T extends object>(ref: HookRef<T>): T;
}

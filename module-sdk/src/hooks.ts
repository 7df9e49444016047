import { AsyncSeriesHook, SyncHook } from 'tapable';

/** Named stages, so taps order themselves without magic numbers. */
export const STAGE = { FIRST: -1000, GUARD: -100, DEFAULT: 0, OBSERVE: 100, LAST: 1000 } as const;

export interface ModuleInfo {
  id: string;
  version: string;
  description: string;
  state: 'running' | 'failed' | 'blocked' | 'disabled' | 'stopped';
  error?: string;
  depends: string[];
  optionalDepends: string[];
  dir: string;
  thirdParty: boolean;
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
}

/** The kernel's own hook catalogue. Modules add theirs with defineHooks. */
export function createKernelHooks() {
  return Object.freeze({
    kernel: Object.freeze({
      boot: new AsyncSeriesHook<[]>([]),
      ready: new AsyncSeriesHook<[]>([]),
      shutdown: new AsyncSeriesHook<[]>([]),
    }),
    module: Object.freeze({
      loaded: new SyncHook<[ModuleInfo]>(['module']),
      unloaded: new SyncHook<[ModuleInfo]>(['module']),
    }),
    config: Object.freeze({
      changed: new AsyncSeriesHook<[ConfigChange]>(['change']),
    }),
    http: Object.freeze({
      request: new SyncHook<[HttpRequestEvent]>(['request']),
      response: new SyncHook<[HttpResponseEvent]>(['response']),
    }),
  });
}
export type KernelHooks = ReturnType<typeof createKernelHooks>;

/** An extension point catalogue owned by a module (e.g. the agents module's tool-call hooks). */
export interface HookRef<T> {
  readonly id: string;
  readonly create: () => T;
}

export function defineHooks<T extends object>(id: string, create: () => T): HookRef<T> {
  return Object.freeze({ id, create });
}

// tapable does not export its base Hook class, so infer structurally.
type AnyHook = { taps: unknown[]; promise(...args: never[]): Promise<unknown> };
type ArgsOf<H> = H extends { promise(...args: infer A): Promise<unknown> } ? A : never;
type ResultOf<H> = H extends { promise(...args: never[]): Promise<infer R> } ? R : never;

export interface TapOptions {
  stage?: number;
}

export interface HookTap<H> {
  tap(label: string, fn: (...args: ArgsOf<H>) => ResultOf<H>, options?: TapOptions): void;
  tapPromise(label: string, fn: (...args: ArgsOf<H>) => Promise<ResultOf<H>>, options?: TapOptions): void;
}

/** A catalogue seen through a module's eyes: taps are named after the module and removed when it unloads. */
export type TapFacade<T> = {
  readonly [K in keyof T]: T[K] extends AnyHook ? HookTap<T[K]> : TapFacade<T[K]>;
};

export interface HookAccess {
  /** The kernel's catalogue, for tapping. */
  readonly kernel: TapFacade<KernelHooks>;
  /** Tap a module-owned catalogue. Throws when its owner is not loaded. */
  tap<T extends object>(ref: HookRef<T>): TapFacade<T>;
  /** Like tap, but undefined when the owner is not loaded (optional dependency). */
  tryTap<T extends object>(ref: HookRef<T>): TapFacade<T> | undefined;
  /** The raw hooks of a catalogue, for calling them (normally done by the owner). */
  get<T extends object>(ref: HookRef<T>): T;
}

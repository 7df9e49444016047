import type { Logger } from 'pino';
import { AsyncSeriesHook, SyncHook, SyncWaterfallHook } from 'tapable';
import type {
  ConfigChange,
  HookRef,
  HttpRequestEvent,
  HttpResponseEvent,
  KernelHooks,
  ModuleInfo,
} from '@talon/module-sdk';
import type { TapFacade, TapOptions } from '@talon/module-sdk';
import type { Same } from './same-type.ts';

type TapFn = (...args: unknown[]) => unknown;
type TapMethod = 'tap' | 'tapPromise';

type RawHook = Record<TapMethod, (options: { name: string; stage?: number }, fn: TapFn) => void> & {
  taps: Array<{ name: string }>;
  call?: unknown;
  _resetCompilation(): void;
};

const isHook = (v: unknown): v is RawHook =>
  Array.isArray((v as RawHook | null)?.taps) && typeof (v as RawHook).tap === 'function';

/** The kernel's own catalogue; what each hook is for is written at its type, KernelHooks in the SDK. */
export function createKernelHooks() {
  return Object.freeze({
    kernel: Object.freeze({
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
      baseHeaders: new SyncWaterfallHook<[Record<string, string>]>(['headers']),
    }),
    log: Object.freeze({
      line: new SyncHook<[string]>(['line']),
    }),
  });
}

// A hook added, removed or retyped here must be so in the SDK's KernelHooks too, which modules tap by.
true satisfies Same<ReturnType<typeof createKernelHooks>, KernelHooks>;

/** The kernel catalogue plus the catalogues modules own (see docs/architecture.md, "Hooks and events"). */
export class HookBus {
  readonly kernel: KernelHooks = createKernelHooks();
  private readonly catalogues = new Map<string, { owner: string; hooks: object }>();

  /** Creates the catalogue on its owner's first load; later copies of the owner keep it, with the taps of others. */
  own(ref: HookRef<object>, owner: string): void {
    const known = this.catalogues.get(ref.id);
    if (known && known.owner !== owner) throw new Error(`hooks '${ref.id}' are owned by module '${known.owner}'`);
    if (!known) this.catalogues.set(ref.id, { owner, hooks: ref.create() });
  }

  catalogue(id: string): { owner: string; hooks: object } | undefined {
    return this.catalogues.get(id);
  }
}

/** The taps of one module copy, named `<owner>:<label>`: staged until commit(); removeAll() takes exactly these. */
export class TapLedger {
  private readonly staged: Array<() => void> = [];
  private readonly hooks = new Set<RawHook>();

  constructor(
    private readonly owner: string,
    private readonly log: Logger,
  ) {}

  facade<T extends object>(catalogue: T): TapFacade<T> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(catalogue))
      out[key] = isHook(value) ? this.tapper(value, key) : this.facade(value as object);
    return out as TapFacade<T>;
  }

  /** Applies the staged taps: the module copy is live. */
  commit(): void {
    for (const apply of this.staged.splice(0)) apply();
  }

  /** tapable has no untap: each hook keeps the others' taps and recompiles. */
  removeAll(): void {
    this.staged.length = 0;
    for (const hook of this.hooks) {
      hook.taps = hook.taps.filter((t) => !t.name.startsWith(`${this.owner}:`));
      hook._resetCompilation();
    }
    this.hooks.clear();
  }

  private tapper(hook: RawHook, key: string) {
    const stage = (method: TapMethod) => (label: string, fn: TapFn, options?: TapOptions) => {
      const failed = (err: unknown) => void this.log.error({ err, hook: key, tap: label }, 'hook tap failed; skipped');
      this.hooks.add(hook);
      this.staged.push(() =>
        hook[method]({ name: `${this.owner}:${label}`, stage: options?.stage }, guarded(method, fn, failed)),
      );
    };
    // Synchronous hooks have call(): they get no tapPromise, as in their type.
    return typeof hook.call === 'function'
      ? { tap: stage('tap') }
      : { tap: stage('tap'), tapPromise: stage('tapPromise') };
  }
}

/**
 * A throwing or rejecting tap is reported and counts as no answer: a bail hook asks the next tap, a waterfall keeps
 * its value.
 */
function guarded(method: TapMethod, fn: TapFn, failed: (err: unknown) => undefined): TapFn {
  if (method === 'tapPromise') return (...args) => new Promise((resolve) => resolve(fn(...args))).catch(failed);
  return (...args) => {
    try {
      return fn(...args);
    } catch (err) {
      return failed(err);
    }
  };
}

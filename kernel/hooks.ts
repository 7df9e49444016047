import type { Logger } from 'pino';
import { createKernelHooks, type HookRef, type KernelHooks, type TapFacade, type TapOptions } from '@talon/module-sdk';

type TapFn = (...args: unknown[]) => unknown;

interface RawHook {
  taps: Array<{ name: string }>;
  tap(options: { name: string; stage?: number }, fn: TapFn): void;
  tapPromise(options: { name: string; stage?: number }, fn: (...args: unknown[]) => Promise<unknown>): void;
  _resetCompilation(): void;
}

const isHook = (v: unknown): v is RawHook =>
  typeof v === 'object' && v !== null && Array.isArray((v as RawHook).taps) && typeof (v as RawHook).tap === 'function';

/**
 * The hook bus: the kernel catalogue plus the catalogues modules own. A
 * catalogue outlives reloads of its owner, so taps of other modules survive.
 */
export class HookBus {
  readonly kernel: KernelHooks = createKernelHooks();
  private readonly catalogues = new Map<string, { owner: string; hooks: object }>();

  own(ref: HookRef<object>, owner: string): void {
    const known = this.catalogues.get(ref.id);
    if (known && known.owner !== owner) throw new Error(`hooks '${ref.id}' are owned by module '${known.owner}'`);
    if (!known) this.catalogues.set(ref.id, { owner, hooks: ref.create() });
  }

  catalogue(id: string): { owner: string; hooks: object } | undefined {
    return this.catalogues.get(id);
  }
}

interface StagedTap {
  hook: RawHook;
  name: string;
  stage?: number;
  promise: boolean;
  fn: TapFn;
}

/**
 * The taps one module instance makes. They are staged until commit(), so a
 * reloading copy's taps become active in the same step as its routes and
 * services, and removeAll() takes exactly this instance's taps away.
 */
export class TapLedger {
  private readonly staged: StagedTap[] = [];
  private readonly applied: StagedTap[] = [];

  constructor(
    private readonly owner: string,
    private readonly log: Logger,
  ) {}

  facade<T extends object>(catalogue: T): TapFacade<T> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(catalogue)) out[key] = isHook(value) ? this.tapper(value, key) : this.facade(value as object);
    return out as TapFacade<T>;
  }

  commit(): void {
    for (const t of this.staged.splice(0)) {
      const options = { name: t.name, stage: t.stage };
      if (t.promise) t.hook.tapPromise(options, t.fn as (...args: unknown[]) => Promise<unknown>);
      else t.hook.tap(options, t.fn);
      this.applied.push(t);
    }
  }

  /** Removes every tap of this instance (tapable has no untap: filter and recompile). */
  removeAll(): void {
    this.staged.length = 0;
    const byHook = new Map<RawHook, Set<string>>();
    for (const { hook, name } of this.applied.splice(0)) byHook.set(hook, (byHook.get(hook) ?? new Set()).add(name));
    for (const [hook, names] of byHook) {
      hook.taps = hook.taps.filter((t) => !names.has(t.name));
      hook._resetCompilation();
    }
  }

  private tapper(hook: RawHook, key: string) {
    // A failing tap is logged and counts as no answer: a bail hook asks the next tap, a waterfall keeps its value.
    const fail = (label: string, err: unknown) => {
      this.log.error({ err, hook: key, tap: label }, 'hook tap failed; skipped');
      return undefined;
    };
    const stage = (label: string, promise: boolean, fn: TapFn, options?: TapOptions) =>
      this.staged.push({ hook, name: `${this.owner}:${label}`, stage: options?.stage, promise, fn });
    const tap = (label: string, fn: TapFn, options?: TapOptions) =>
      stage(
        label,
        false,
        (...args) => {
          try {
            return fn(...args);
          } catch (err) {
            return fail(label, err);
          }
        },
        options,
      );
    // Synchronous hooks have call() (async ones have none): they get no tapPromise, as in their type.
    if (typeof (hook as { call?: unknown }).call === 'function') return { tap };
    const tapPromise = (label: string, fn: (...args: unknown[]) => Promise<unknown>, options?: TapOptions) =>
      stage(
        label,
        true,
        (...args) => {
          try {
            return fn(...args).catch((err: unknown) => fail(label, err));
          } catch (err) {
            return Promise.resolve(fail(label, err));
          }
        },
        options,
      );
    return { tap, tapPromise };
  }
}

import type { Logger } from 'pino';
import { createKernelHooks, type HookRef, type KernelHooks, type TapFacade, type TapOptions } from '@talon/module-sdk';

interface RawHook {
  taps: Array<{ name: string }>;
  constructor: { name: string };
  tap(options: { name: string; stage?: number }, fn: (...args: unknown[]) => unknown): void;
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
  private readonly catalogues = new Map<string, object>();

  own(ref: HookRef<object>): object {
    let catalogue = this.catalogues.get(ref.id);
    if (!catalogue) {
      catalogue = ref.create();
      this.catalogues.set(ref.id, catalogue);
    }
    return catalogue;
  }

  catalogue(id: string): object | undefined {
    return this.catalogues.get(id);
  }
}

/** The taps one module instance made, so they can be removed when it unloads. */
export class TapLedger {
  private readonly made: Array<{ hook: RawHook; name: string }> = [];

  constructor(
    private readonly owner: string,
    private readonly log: Logger,
  ) {}

  facade<T extends object>(catalogue: T): TapFacade<T> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(catalogue)) {
      out[key] = isHook(value) ? this.tapper(value, key) : this.facade(value as object);
    }
    return out as TapFacade<T>;
  }

  count(): number {
    return this.made.length;
  }

  /** Removes every tap of this instance (tapable has no untap: filter and recompile). */
  removeAll(): void {
    const byHook = new Map<RawHook, Set<string>>();
    for (const { hook, name } of this.made.splice(0)) {
      if (!byHook.has(hook)) byHook.set(hook, new Set());
      byHook.get(hook)!.add(name);
    }
    for (const [hook, names] of byHook) {
      hook.taps = hook.taps.filter((t) => !names.has(t.name));
      hook._resetCompilation();
    }
  }

  private tapper(hook: RawHook, key: string) {
    const waterfall = hook.constructor.name.includes('Waterfall');
    const name = (label: string) => `${this.owner}:${label}`;
    const fail = (label: string, err: unknown, args: unknown[]) => {
      this.log.error({ err, hook: key, tap: label }, 'hook tap failed; skipped');
      return waterfall ? args[0] : undefined;
    };
    return {
      tap: (label: string, fn: (...args: unknown[]) => unknown, options?: TapOptions) => {
        const tapName = name(label);
        hook.tap({ name: tapName, stage: options?.stage }, (...args: unknown[]) => {
          try {
            return fn(...args);
          } catch (err) {
            return fail(label, err, args);
          }
        });
        this.made.push({ hook, name: tapName });
      },
      tapPromise: (label: string, fn: (...args: unknown[]) => Promise<unknown>, options?: TapOptions) => {
        const tapName = name(label);
        hook.tapPromise({ name: tapName, stage: options?.stage }, async (...args: unknown[]) => {
          try {
            return await fn(...args);
          } catch (err) {
            return fail(label, err, args);
          }
        });
        this.made.push({ hook, name: tapName });
      },
    };
  }
}

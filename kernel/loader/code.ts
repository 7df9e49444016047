import path from 'node:path';
import satisfies from 'semver/functions/satisfies.js';
import * as sdk from '@talon/module-sdk';
import { isDefinedModule, isHookRef, isServiceRef, type DefinedModule } from '@talon/module-sdk';
import { connections, type Manifest } from './manifest.ts';
import { bundleModule, evaluateBundle, type Bundlers } from './bundle.ts';

/**
 * Loads module code: the entry bundle, and the contracts (`@talon/<name>`) it
 * imports, each resolved to its owner's contract file. A contract holds types,
 * service refs and hook catalogues only, so a consumer never keeps a stale copy
 * of another module's logic across that module's reloads.
 */
export class CodeLoader {
  /** Contract exports by owner, once evaluated (a promise while in flight: modules load in parallel). */
  private readonly contracts = new Map<string, Promise<object>>();
  private readonly ready = new Map<string, object>();
  private readonly bundlers: Bundlers = new Map();

  constructor(private readonly manifest: (name: string) => Manifest | undefined) {}

  /**
   * Bundles and evaluates a module. `fresh` skips the bundle cache: a reload always rebuilds, since a
   * same-size rewrite within the mtime resolution must not hit the cache.
   */
  async definition(m: Manifest, fresh = false): Promise<DefinedModule> {
    if (!satisfies(sdk.SDK_VERSION, m.sdk)) throw new Error(`module '${m.name}' needs @talon/module-sdk ${m.sdk}; this service has ${sdk.SDK_VERSION}`);
    const entry = path.join(m.dir, m.entry);
    const exports = await this.evaluate(m, entry, fresh, []);
    const def = (exports as { default?: unknown }).default ?? exports;
    if (!isDefinedModule(def)) throw new Error(`${entry}: the default export is not a module (use defineModule from @talon/module-sdk)`);
    return def as DefinedModule;
  }

  /** Ends the incremental build contexts of reloads (at shutdown). */
  async dispose(): Promise<void> {
    await Promise.all([...this.bundlers.values()].map((c) => c.dispose()));
    this.bundlers.clear();
  }

  /** The owner's code changed: its contract is read again by the next consumer that loads. */
  forget(name: string): void {
    this.contracts.delete(name);
    this.ready.delete(name);
  }

  /** `chain` holds the contracts being prepared on the way here, to report a cycle instead of waiting forever. */
  private async evaluate(m: Manifest, file: string, fresh: boolean, chain: string[]): Promise<unknown> {
    const bundle = await bundleModule(file, fresh ? this.bundlers : undefined);
    await Promise.all(bundle.contracts.map((name) => this.contract(m, name, chain)));
    return evaluateBundle(bundle, file, (id) => (id === '@talon/module-sdk' ? sdk : id.startsWith('@talon/') ? this.ready.get(id.slice(7)) : undefined));
  }

  private contract(consumer: Manifest, name: string, chain: string[]): Promise<object> {
    const owner = this.owner(consumer, name);
    if (chain.includes(name)) return Promise.reject(new Error(`contracts import each other: ${[...chain, name].join(' -> ')}`));
    let pending = this.contracts.get(name);
    if (!pending) {
      pending = this.load(owner, [...chain, name]);
      this.contracts.set(name, pending);
      pending.catch(() => this.contracts.delete(name));
    }
    return pending;
  }

  private async load(owner: Manifest, chain: string[]): Promise<object> {
    const file = path.join(owner.dir, owner.contract);
    const exports = (await this.evaluate(owner, file, false, chain)) as Record<string, unknown>;
    for (const [key, value] of Object.entries(exports)) {
      if (!isServiceRef(value) && !isHookRef(value) && (typeof value === 'object' || typeof value === 'function')) {
        throw new Error(`${file}: export '${key}' is not a type, service ref or hook catalogue; move it into a service`);
      }
    }
    this.ready.set(owner.name, exports);
    return exports;
  }

  private owner(consumer: Manifest, name: string): Manifest {
    const owner = this.manifest(name);
    if (!owner) throw new Error(`module '${consumer.name}' imports @talon/${name}, but no module '${name}' is installed`);
    if (name !== consumer.name && !connections(consumer).has(name)) {
      throw new Error(
        `module '${consumer.name}' imports @talon/${name} without declaring it: add '${name}' to depends, optional_depends or consumes in ${path.join(consumer.dir, 'module.toml')}`,
      );
    }
    return owner;
  }
}

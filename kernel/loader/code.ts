import path from 'node:path';
import satisfies from 'semver/functions/satisfies.js';
import * as sdk from '@talon/module-sdk';
import { isDefinedModule, isEventCatalogue, isHookRef, isServiceRef, type DefinedModule } from '@talon/module-sdk';
import { connections, howToDeclare, type Manifest } from './manifest.ts';
import { bundleModule, evaluateBundle, located, type Bundlers } from './bundle.ts';

/**
 * Loads module code and the contracts (`@talon/<name>`) it imports: types, service refs, hook and event catalogues
 * only.
 */
export class CodeLoader {
  /** Contract exports by owner, evaluated once (shared while in flight: modules load in parallel). */
  private readonly contracts = new Map<string, Promise<object>>();
  private readonly bundlers: Bundlers = new Map();

  constructor(private readonly manifest: (name: string) => Manifest | undefined) {}

  /** Bundles and evaluates a module; `fresh` (a reload) rebuilds incrementally instead of reading the bundle cache. */
  async definition(m: Manifest, fresh = false): Promise<DefinedModule> {
    if (!satisfies(sdk.SDK_VERSION, m.sdk))
      throw new Error(`module '${m.name}' needs @talon/module-sdk ${m.sdk}; this service has ${sdk.SDK_VERSION}`);
    const entry = path.join(m.dir, m.entry);
    const exports = (await this.evaluate(m, entry, fresh, [])) as { default?: unknown };
    const def = exports.default ?? exports;
    if (!isDefinedModule(def))
      throw new Error(`${entry}: the default export is not a module (use defineModule from @talon/module-sdk)`);
    return def;
  }

  /** Ends the incremental build contexts of reloads (at shutdown). */
  async dispose(): Promise<void> {
    await Promise.all([...this.bundlers.values()].map((c) => c.dispose()));
    this.bundlers.clear();
  }

  /** The owner's code changed: its contract is read again by the next consumer that loads. */
  readonly forget = (name: string): void => void this.contracts.delete(name);

  /** `chain`: the contracts being prepared on the way here, to report a cycle instead of waiting forever. */
  private async evaluate(m: Manifest, file: string, fresh: boolean, chain: string[]): Promise<unknown> {
    const bundle = await bundleModule(file, fresh ? this.bundlers : undefined);
    const contracts = await Promise.all(
      Object.entries(bundle.contracts).map(async ([name, site]) => {
        try {
          return [`@talon/${name}`, await this.contract(m, name, chain)] as const;
        } catch (err) {
          // A contract that cannot be had is the importing line's problem.
          throw located(err as Error, site);
        }
      }),
    );
    return evaluateBundle(bundle, file, new Map<string, unknown>([['@talon/module-sdk', sdk], ...contracts]));
  }

  private contract(consumer: Manifest, name: string, chain: string[]): Promise<object> {
    const owner = this.manifest(name);
    if (!owner)
      throw new Error(`module '${consumer.name}' imports @talon/${name}, but no module '${name}' is installed`);
    if (name !== consumer.name && !connections(consumer).has(name)) {
      throw new Error(
        `module '${consumer.name}' imports @talon/${name} without declaring it: ${howToDeclare(consumer, name)}`,
      );
    }
    if (chain.includes(name)) throw new Error(`contracts import each other: ${[...chain, name].join(' -> ')}`);
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
      const declaration = isServiceRef(value) || isHookRef(value) || isEventCatalogue(value);
      if (!declaration && (typeof value === 'object' || typeof value === 'function')) {
        throw new Error(
          `${file}: export '${key}' is not a type, service ref, hook or event catalogue; move it into a service`,
        );
      }
    }
    return exports;
  }
}

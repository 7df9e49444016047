import path from 'node:path';
import semver from 'semver';
import * as sdk from '@talon/module-sdk';
import { isDefinedModule, isHookRef, isServiceRef, type DefinedModule } from '@talon/module-sdk';
import { connections, type Manifest } from './manifest.ts';
import { bundleModule, evaluateBundle, type Bundle } from './bundle.ts';

/**
 * Loads module code: the entry bundle, and the contracts (`@talon/<name>`) it
 * imports, each resolved to its owner's contract file. A contract holds types,
 * service refs and hook catalogues only, so a consumer never keeps a stale copy
 * of another module's logic across that module's reloads.
 */
export class CodeLoader {
  private readonly contracts = new Map<string, object>();
  private readonly preparing = new Set<string>();

  constructor(private readonly manifest: (name: string) => Manifest | undefined) {}

  /**
   * Bundles and evaluates a module. `fresh` skips the bundle cache: a reload always rebuilds, since a
   * same-size rewrite within the mtime resolution must not hit the cache.
   */
  async definition(m: Manifest, fresh = false): Promise<DefinedModule> {
    if (!semver.satisfies(sdk.SDK_VERSION, m.sdk)) throw new Error(`module '${m.name}' needs @talon/module-sdk ${m.sdk}; this service has ${sdk.SDK_VERSION}`);
    const entry = path.join(m.dir, m.entry);
    const exports = await this.evaluate(m, entry, fresh);
    const def = (exports as { default?: unknown }).default ?? exports;
    if (!isDefinedModule(def)) throw new Error(`${entry}: the default export is not a module (use defineModule from @talon/module-sdk)`);
    return def as DefinedModule;
  }

  /** The owner's code changed: its contract is read again by the next consumer that loads. */
  forget(name: string): void {
    this.contracts.delete(name);
  }

  private async evaluate(m: Manifest, file: string, fresh: boolean): Promise<unknown> {
    const bundle = await bundleModule(file, { cache: !fresh });
    await this.prepareContracts(m, bundle);
    return evaluateBundle(bundle, file, (id) => (id === '@talon/module-sdk' ? sdk : id.startsWith('@talon/') ? this.contract(m, id.slice(7)) : undefined));
  }

  private async prepareContracts(consumer: Manifest, bundle: Bundle): Promise<void> {
    for (const name of bundle.contracts) {
      const owner = this.owner(consumer, name);
      if (this.contracts.has(name) || this.preparing.has(name)) continue;
      this.preparing.add(name);
      const exports = (await this.evaluate(owner, path.join(owner.dir, owner.contract), false).finally(() => this.preparing.delete(name))) as Record<
        string,
        unknown
      >;
      for (const [key, value] of Object.entries(exports)) {
        if (!isServiceRef(value) && !isHookRef(value) && (typeof value === 'object' || typeof value === 'function')) {
          throw new Error(`${path.join(owner.dir, owner.contract)}: export '${key}' is not a type, service ref or hook catalogue; move it into a service`);
        }
      }
      this.contracts.set(name, exports);
    }
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

  private contract(consumer: Manifest, name: string): object {
    this.owner(consumer, name);
    const exports = this.contracts.get(name);
    if (!exports) throw new Error(`contract @talon/${name} was not prepared`);
    return exports;
  }
}

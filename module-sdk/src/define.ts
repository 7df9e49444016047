import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { AwilixContainer } from 'awilix';
import type { HookAccess, HookRef } from './hooks.ts';
import type { KernelApi } from './kernel-api.ts';
import type { KernelSettings, JsonSchema } from './settings.ts';
import type { Routes, RootHttp } from './http.ts';
import type { ServiceRef } from './refs.ts';

/** Folders under the Talon home that modules may use. */
export interface TalonPaths {
  home: string;
  data: string;
  uploads: string;
  checkpoints: string;
  logs: string;
  workspaces: string;
}

export interface ModuleContext<C = Record<string, unknown>> {
  readonly id: string;
  readonly version: string;
  /** The module's own folder (use it instead of import.meta.url: module code is bundled). */
  readonly dir: string;
  /** This module's config section, validated, defaults applied; always the current value. */
  readonly config: C;
  /** The kernel's top-level settings (default_model, provider_urls, ...), read-only. */
  readonly settings: Readonly<KernelSettings>;
  readonly log: Logger;
  /** The shared SQLite database (WAL). Tables of a module are prefixed with its id. */
  readonly db: Database;
  readonly paths: TalonPaths;
  /** This module's awilix scope; kernel services resolve from its parent. */
  readonly container: AwilixContainer;
  readonly hooks: HookAccess;
  readonly kernel: KernelApi;
  /** Offers a service to other modules. */
  provide<T>(ref: ServiceRef<T>, value: T, dispose?: (value: T) => unknown): void;
  /**
   * A service of another module, as a live view: calls always reach the
   * provider's current instance, also after it hot-reloads. Throws when absent.
   */
  use<T extends object>(ref: ServiceRef<T>): T;
  /** Like use, but undefined when no loaded module provides it. */
  tryUse<T extends object>(ref: ServiceRef<T>): T | undefined;
  /** Runs fn when the module stops or unloads (in reverse order of registration). */
  onStop(fn: () => unknown): void;
  /** Timers that are cleared automatically when the module stops. */
  setInterval(fn: () => unknown, ms: number): NodeJS.Timeout;
  setTimeout(fn: () => unknown, ms: number): NodeJS.Timeout;
}

export const MODULE_BRAND = 'talon.module@1';

export interface ModuleDefinition<C = Record<string, unknown>> {
  /** JSON Schema of this module's config section (named in module.toml). */
  configSchema?: JsonSchema;
  /** Extension point catalogues this module owns. */
  hooks?: HookRef<object>[];
  /** Synchronous, no I/O: provide services and tap hooks. */
  register?(ctx: ModuleContext<C>): void;
  /** Connect, warm caches, start timers. */
  start?(ctx: ModuleContext<C>): Promise<void> | void;
  stop?(ctx: ModuleContext<C>): Promise<void> | void;
  /** Root-level HTTP behaviour (hooks that apply to every route, error handlers). Replayed on each HTTP generation. */
  http?(app: RootHttp, ctx: ModuleContext<C>): void;
  /** The module's routes, on an encapsulated child. Replayed on each HTTP generation; no I/O here. */
  routes?(app: Routes, ctx: ModuleContext<C>): void;
}

export type DefinedModule<C = Record<string, unknown>> = ModuleDefinition<C> & { readonly brand: typeof MODULE_BRAND };

export function defineModule<C = Record<string, unknown>>(definition: ModuleDefinition<C>): DefinedModule<C> {
  return Object.freeze({ ...definition, brand: MODULE_BRAND });
}

export function isDefinedModule(value: unknown): value is DefinedModule<unknown> {
  return typeof value === 'object' && value !== null && (value as { brand?: unknown }).brand === MODULE_BRAND;
}

import type { Logger } from 'pino';
import type { AwilixContainer } from 'awilix';
import type { HookAccess, HookRef } from './hooks.ts';
import type { EventAccess, EventCatalogue } from './events.ts';
import type { KernelApi } from './kernel-api.ts';
import type { JsonSchema } from './settings.ts';
import type { Routes, RootHttp, HttpStage } from './http.ts';
import type { ServiceRef } from './refs.ts';
import type { ChangeFeed, NodeAccess, Store } from './store.ts';

export interface ModuleContext<C = Record<string, unknown>> {
  readonly id: string;
  readonly version: string;
  /** The module's own folder (use it instead of import.meta.url: module code is bundled). */
  readonly dir: string;
  /**
   * This module's configuration: its section (`config_section`) and the top-level keys it claims
   * (`config_keys`), validated, defaults filled in; always the current value.
   */
  readonly config: C;
  readonly log: Logger;
  /**
   * The service's database (SQLite in the home, PostgreSQL in a fleet), shared by every module; a module's tables
   * are prefixed with its name ('-' as '_'). See docs/modules.md, Storage.
   */
  readonly store: Store;
  /** This process among those sharing the database: its node id, the live nodes, and the dead ones' work. */
  readonly nodes: NodeAccess;
  /** Cache invalidation across processes: note changes of cached rows; hear the other processes' notes. */
  readonly changes: ChangeFeed;
  /**
   * Where the service's shared files live, for folders a person is meant to browse (agent workspaces, installed
   * skills, backups): `$TALON_DATA_DIR`, the one directory every node of a fleet mounts, else the Talon home
   * (`$TALON_HOME`). A file one node writes here is read by the others.
   */
  readonly home: string;
  /**
   * This node's own home (`$TALON_HOME`: config.toml, logs), for what each node keeps to itself; the same folder as
   * `home` unless `TALON_DATA_DIR` is set. Anything the other nodes must see belongs in `home` or `dataDir`.
   */
  readonly nodeHome: string;
  /** `<home>/data/<module>`, the module's private folder (shared by the nodes of a fleet); created on first use. */
  readonly dataDir: string;
  /**
   * The module's awilix container: what it provides is registered here by ref id, and so are live
   * views of the services of the modules its manifest declares (depends, optional_depends, consumes).
   */
  readonly container: AwilixContainer;
  readonly hooks: HookAccess;
  /**
   * The event bus: a catalogue's events through `of(catalogue)` (publish your own, subscribe to declared modules'),
   * `custom` events, and '*' for declared observers; isolated, bounded delivery that ends when this copy stops.
   */
  readonly events: EventAccess;
  readonly kernel: KernelApi;
  /** Offers a service to other modules; the ref must be listed in module.toml `provides`. */
  provide<T>(ref: ServiceRef<T>, value: T, dispose?: (value: T) => unknown): void;
  /**
   * A service of another module (declared in module.toml), as a live view: calls always reach the
   * provider's current instance, also after it hot-reloads. Throws when the use is undeclared or
   * the provider is not running.
   */
  use<T extends object>(ref: ServiceRef<T>): T;
  /** Like use, but undefined when the (declared) provider is not running. */
  tryUse<T extends object>(ref: ServiceRef<T>): T | undefined;
  /** Runs fn when the module stops or unloads (in reverse order of registration). */
  onStop(fn: () => unknown): void;
  /**
   * Aborted when this copy retires: before its successor takes over on a hot reload, when the module is disabled,
   * and at shutdown. Pass it to whatever outlives a request (fetches, agent turns, sockets, sleeps in a poller).
   */
  readonly signal: AbortSignal;
  /**
   * Work that outlives the call that began it: when this copy retires, the kernel aborts `signal` and waits (bounded)
   * for tracked work to settle before its successor takes over or the module stops. A rejection is logged (handle an
   * expected one inside the work). Returns `work`.
   */
  track<T>(work: Promise<T>): Promise<T>;
  /** Timers that stop when the copy retires; a callback gets `signal`, and its promise is tracked. */
  setInterval(fn: (signal: AbortSignal) => unknown, ms: number): NodeJS.Timeout;
  setTimeout(fn: (signal: AbortSignal) => unknown, ms: number): NodeJS.Timeout;
}

/**
 * What register() hands back: the module's running parts. They close over the
 * state register() built, so that state reaches them typed.
 */
export interface ModuleParts {
  /** Connect, warm caches, start timers. A throw fails the module (or keeps the old copy on reload). */
  start?(): Promise<void> | void;
  /**
   * Background work (pollers, socket loops) that begins once this copy is live — after its predecessor's work has
   * settled — and ends when `signal` aborts. Its promise is tracked; a rejection is logged.
   */
  run?(signal: AbortSignal): Promise<void> | void;
  /** Release what start() took; taps, timers, services and onStop handlers are released for you. */
  stop?(): Promise<void> | void;
  /** Root-level HTTP behaviour (hooks for every route, error handlers). Replayed on each HTTP generation; no I/O. */
  http?(app: RootHttp): void;
  /** Where `http()` runs among the root parts of all modules (HTTP_STAGES); default `handle`. */
  httpStage?: HttpStage;
  /** The module's routes, on an encapsulated child. Replayed on each HTTP generation; no I/O. */
  routes?(app: Routes): void;
}

/** A reference-system spelling of a config key, rewritten to ours before validation. */
export interface ConfigAlias {
  /** Dotted path as the reference writes it, e.g. 'rate_limit.api_requests_per_minute'. */
  from: string;
  /** Our top-level key, or `section.table` to merge an aliased table into a table of a section (ours wins key by key). */
  to: string;
  convert?: (value: unknown) => unknown;
}

export const MODULE_BRAND = 'talon.module@1';

export interface ModuleDefinition<C = Record<string, unknown>> {
  /** JSON Schema of this module's config section (named by `config_section` in module.toml). */
  configSchema?: JsonSchema;
  /** Schemas of the top-level config keys this module claims (listed in module.toml `config_keys`). */
  configKeys?: Record<string, JsonSchema>;
  /** Other spellings of the claimed keys that are accepted. */
  configAliases?: readonly ConfigAlias[];
  /** Extension point catalogues this module owns. */
  hooks?: readonly HookRef<object>[];
  /** Event catalogues this module owns: only it may publish their events (see defineEvents). */
  events?: readonly EventCatalogue[];
  /**
   * Synchronous, no I/O: build the module's services, provide them, tap hooks, and return the
   * running parts. On a hot reload nothing of this is visible until the new copy has started and
   * its routes are built; then everything switches in one step.
   */
  register?(ctx: ModuleContext<C>): ModuleParts | void;
}

export type DefinedModule<C = Record<string, unknown>> = ModuleDefinition<C> & { readonly brand: typeof MODULE_BRAND };

export function defineModule<C = Record<string, unknown>>(definition: ModuleDefinition<C>): DefinedModule<C> {
  return Object.freeze({ ...definition, brand: MODULE_BRAND });
}

export function isDefinedModule(value: unknown): value is DefinedModule<unknown> {
  return typeof value === 'object' && value !== null && (value as { brand?: unknown }).brand === MODULE_BRAND;
}

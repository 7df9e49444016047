/**
 * The catalogue: shipped data, the last registry update, user files, custom
 * models, aliases and URL overrides, merged into a Snapshot; stored keys are the secrets module's.
 * Implements the CatalogService contract; the routes call its other methods.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { badRequest, notFound, type ChangeFeed, type Queries, type Store } from '@talon/module-sdk';
import type { CatalogService, MediaCapabilityName, MediaModelEntry, MediaPriceUnit, ModelEntry, ProviderEntry } from '../api.ts';
import { checkProviderFile, loadAliasFile, loadProviderDir } from './files.ts';
import type { ProviderFile } from './schema.ts';
import { Snapshot, type ListFilter } from './snapshot.ts';
import type { ProviderKeys } from '@talon/secrets';

/** Other names clients use for catalogue providers. */
const PROVIDER_ALIASES: Record<string, string> = { google: 'gemini', 'llama.cpp': 'llamacpp', 'llama-cpp': 'llamacpp', 'lm-studio': 'lmstudio' };

export type AuthStatus = 'configured' | 'no_key_needed' | 'missing';
/** Where the key the service would send comes from: a stored key wins over the environment variable. */
export type KeySource = 'stored' | 'environment' | 'none';

export interface ProviderView extends ProviderEntry {
  auth_status: AuthStatus;
  key_source: KeySource;
  model_count: number;
  /** Always present in the view: an empty list for providers with no media capability. */
  media_capabilities: MediaCapabilityName[];
}

/** What a registry update brings: a complete set of provider files and aliases. */
export interface RegistryContent {
  version: string;
  source: string;
  providers: ProviderFile[];
  aliases: Record<string, string>;
}

interface RegistryState extends RegistryContent {
  fetched_at: string;
}

export interface UpdateDiff {
  added: number;
  updated: number;
  removed: number;
}

export interface StoreDeps {
  store: Store;
  /** Notes of the rows behind the cached layers, and the other processes' notes. */
  changes: ChangeFeed;
  /** The stored provider keys (the secrets module's; they follow the other processes there). */
  keys: () => ProviderKeys;
  log: Logger;
  /** The catalogue shipped with the module (providers/*.toml, aliases.toml). */
  shippedDir: string;
  /** Talon home: user providers/*.toml and aliases.toml. */
  home: string;
  /** The module's private folder, where the accepted registry update is kept (read on use: it is created then). */
  stateDir: () => string;
  /** [provider_urls]. */
  providerUrls: () => Readonly<Record<string, string>>;
}

/** Where releases before the per-module data folders kept the registry update. */
const LEGACY_REGISTRY = path.join('data', 'catalog-registry.json');

/**
 * The layers other processes of the home may change, each a change-feed topic: a note makes the others read that
 * layer again (the registry layer is a file in the module's data folder, the others are tables).
 */
export const LAYERS = ['aliases', 'custom', 'urls', 'registry'] as const;
export type Layer = (typeof LAYERS)[number];

export class CatalogStore implements CatalogService {
  private snap: Snapshot;
  private builtin: ProviderFile[] = [];
  private builtinAliases: Record<string, string> = {};
  private builtinVersion = 'builtin';
  private registry?: RegistryState;
  private user: ProviderFile[] = [];
  private userAliasFile: Record<string, string> = {};
  private custom: ModelEntry[] = [];
  private userAliases = new Map<string, string | null>();
  private urls = new Map<string, string>();
  /** Loads one after another: a reload that read older rows never lands after one that read newer. */
  private loading: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: StoreDeps) {
    this.snap = this.build();
  }

  /** The stored provider keys, for the key routes. */
  get keys(): ProviderKeys {
    return this.deps.keys();
  }

  private get registryFile(): string {
    return path.join(this.deps.stateDir(), 'registry.json');
  }

  /** Reads every layer (start). Bad files are logged and skipped. */
  load(): Promise<void> {
    return this.serially(() => this.loadAll());
  }

  /** Reads one layer again: another process changed it. */
  reload(layer: Layer): Promise<void> {
    return this.serially(async () => {
      if (layer === 'aliases') this.userAliases = await this.loadAliases();
      else if (layer === 'custom') this.custom = await this.loadCustom();
      else if (layer === 'urls') this.urls = await this.loadUrls();
      else this.registry = this.readRegistryState();
      this.snap = this.build();
    });
  }

  private serially(work: () => Promise<void>): Promise<void> {
    const next = this.loading.then(work);
    this.loading = next.catch(() => undefined);
    return next;
  }

  private async loadAll(): Promise<void> {
    const { log, shippedDir, home } = this.deps;
    const shipped = loadProviderDir(path.join(shippedDir, 'providers'));
    const user = loadProviderDir(path.join(home, 'providers'));
    for (const e of [...shipped.errors, ...user.errors]) log.error(`catalog file skipped: ${e}`);
    this.builtin = shipped.files;
    this.user = user.files;
    this.builtinVersion = `builtin-${createHash('sha256').update(JSON.stringify(shipped.files)).digest('hex').slice(0, 12)}`;
    this.builtinAliases = this.aliasFile(path.join(shippedDir, 'aliases.toml'));
    this.userAliasFile = this.aliasFile(path.join(home, 'aliases.toml'));
    this.registry = this.readRegistryState();
    this.custom = await this.loadCustom();
    this.userAliases = await this.loadAliases();
    this.urls = await this.loadUrls();
    this.snap = this.build();
    for (const w of this.snap.warnings) log.warn(`catalog: ${w}`);
    log.info(`catalog loaded: ${this.snap.providers.size} providers, ${this.snap.models.size} models, ${this.snap.aliases.size} aliases`);
  }

  private async loadCustom(): Promise<ModelEntry[]> {
    const rows = await this.deps.store.many<{ entry: string }>('SELECT entry FROM catalog_custom_models ORDER BY created_at');
    return rows.map((r) => JSON.parse(r.entry) as ModelEntry);
  }

  private async loadAliases(): Promise<Map<string, string | null>> {
    const rows = await this.deps.store.many<{ alias: string; model_id: string | null }>('SELECT alias, model_id FROM catalog_aliases');
    return new Map(rows.map((r) => [r.alias, r.model_id]));
  }

  private async loadUrls(): Promise<Map<string, string>> {
    const rows = await this.deps.store.many<{ provider: string; base_url: string }>('SELECT provider, base_url FROM catalog_provider_urls');
    return new Map(rows.map((r) => [r.provider, r.base_url]));
  }

  /** Writes a layer's rows and notes the change in the same transaction. */
  private write(layer: Layer, key: string, work: (t: Queries) => Promise<unknown>): Promise<void> {
    return this.deps.store.tx(async (t) => {
      await work(t);
      await this.deps.changes.note(layer, key, t);
    });
  }

  private aliasFile(file: string): Record<string, string> {
    try {
      return loadAliasFile(file);
    } catch (err) {
      this.deps.log.error(`catalog file skipped: ${(err as Error).message}`);
      return {};
    }
  }

  private readRegistryState(): RegistryState | undefined {
    const legacy = path.join(this.deps.home, LEGACY_REGISTRY);
    if (!existsSync(this.registryFile) && existsSync(legacy)) renameSync(legacy, this.registryFile);
    if (!existsSync(this.registryFile)) return undefined;
    try {
      const state = JSON.parse(readFileSync(this.registryFile, 'utf8')) as RegistryState;
      state.providers = state.providers.map((p, i) => checkProviderFile(p, `${this.registryFile} providers[${i}]`));
      return state;
    } catch (err) {
      this.deps.log.error(`catalog registry update ignored: ${(err as Error).message}`);
      return undefined;
    }
  }

  private build(registry = this.registry, custom = this.custom, userAliases = this.userAliases): Snapshot {
    return new Snapshot({
      providerFiles: [this.builtin, registry?.providers ?? [], this.user],
      aliasFiles: [this.builtinAliases, registry?.aliases ?? {}, this.userAliasFile],
      custom,
      userAliases,
    });
  }

  // ---- CatalogService ----

  providers(): ProviderEntry[] {
    return [...this.snap.providers.values()];
  }

  provider(name: string): ProviderEntry | undefined {
    return this.snap.providers.get(name) ?? this.snap.providers.get(PROVIDER_ALIASES[name] ?? '');
  }

  models(filter?: ListFilter): ModelEntry[] {
    return this.snap.list(this.canonical(filter));
  }

  private canonical(filter: ListFilter = {}): ListFilter {
    return filter.provider === undefined ? filter : { ...filter, provider: this.provider(filter.provider)?.name ?? filter.provider };
  }

  model(idOrAlias: string): ModelEntry | undefined {
    return this.snap.model(idOrAlias);
  }

  resolveAlias(name: string): string {
    return this.snap.resolveAlias(name);
  }

  apiKey(provider: string): string | undefined {
    return this.keyWithSource(provider)?.key;
  }

  private keyWithSource(provider: string): { key: string; source: Exclude<KeySource, 'none'> } | undefined {
    const name = this.provider(provider)?.name ?? provider;
    const stored = this.keys.get(name);
    if (stored) return { key: stored, source: 'stored' };
    const envVar = this.snap.providers.get(name)?.env_var;
    const fromEnv = envVar && process.env[envVar];
    return fromEnv ? { key: fromEnv, source: 'environment' } : undefined;
  }

  configuredUrl(provider: string): string | undefined {
    const name = this.provider(provider)?.name ?? provider;
    return this.urls.get(name) ?? this.deps.providerUrls()[name];
  }

  baseUrl(provider: string): string | undefined {
    const entry = this.provider(provider);
    const url = this.configuredUrl(provider) ?? entry?.base_url;
    if (url === undefined) return undefined;
    const trimmed = url.replace(/\/+$/, '');
    // The native Ollama API lives at the root; users often write the OpenAI-compatible /v1 address.
    return entry?.api_format === 'ollama' ? trimmed.replace(/\/v1$/, '') : trimmed;
  }

  cost(_provider: string, model: string, inputTokens: number, outputTokens: number): number {
    const m = this.snap.model(model);
    if (!m) return 0;
    return (inputTokens * m.input_cost_per_1m + outputTokens * m.output_cost_per_1m) / 1_000_000;
  }

  mediaPrice(provider: string, model: string): { unit: MediaPriceUnit; usd_per_unit: number } | undefined {
    const m = this.snap.mediaModels.get(this.provider(provider)?.name ?? provider)?.get(model);
    return m && { unit: m.unit, usd_per_unit: m.usd_per_unit };
  }

  // ---- used by the routes ----

  /** The priced media models of a provider (by its name or another name clients use). */
  mediaModels(provider: string): MediaModelEntry[] {
    const name = this.provider(provider)?.name ?? provider;
    return [...(this.snap.mediaModels.get(name)?.values() ?? [])];
  }

  listJson(filter: ListFilter): Buffer {
    return this.snap.listJson(this.canonical(filter));
  }

  aliases(): Record<string, string> {
    return Object.fromEntries(this.snap.aliases);
  }

  /** Throws 404 naming the provider when it is unknown. */
  requireProvider(name: string): ProviderEntry {
    const p = this.provider(name);
    if (!p) throw notFound(`provider '${name}' not found`);
    return p;
  }

  hasKey(provider: ProviderEntry): boolean {
    return this.apiKey(provider.name) !== undefined;
  }

  view(p: ProviderEntry): ProviderView {
    const key_source = this.keyWithSource(p.name)?.source ?? 'none';
    const auth_status: AuthStatus = key_source !== 'none' ? 'configured' : p.key_required ? 'missing' : 'no_key_needed';
    return {
      ...p,
      base_url: this.baseUrl(p.name) ?? p.base_url,
      auth_status,
      key_source,
      model_count: this.snap.byProvider.get(p.name)?.length ?? 0,
      media_capabilities: p.media_capabilities ?? [],
    };
  }

  /** created is false when an existing alias was re-pointed. */
  async setAlias(alias: string, modelId: string): Promise<{ created: boolean; model_id: string }> {
    const target = this.snap.model(modelId);
    if (!target) throw badRequest(`model '${modelId}' not found`);
    if (this.snap.models.has(alias)) throw badRequest(`alias '${alias}' is already a model id`);
    const created = !this.snap.aliases.has(alias);
    await this.write('aliases', alias, (t) =>
      t.run(
        'INSERT INTO catalog_aliases (alias, model_id, updated_at) VALUES (?, ?, ?) ON CONFLICT (alias) DO UPDATE SET model_id = excluded.model_id, updated_at = excluded.updated_at',
        [alias, target.id, new Date().toISOString()],
      ),
    );
    this.userAliases.set(alias, target.id);
    this.snap = this.build();
    return { created, model_id: target.id };
  }

  async deleteAlias(alias: string): Promise<void> {
    if (!this.snap.aliases.has(alias)) throw notFound(`alias '${alias}' not found`);
    // A tombstone also hides an alias that comes from the catalogue files.
    await this.write('aliases', alias, (t) =>
      t.run(
        'INSERT INTO catalog_aliases (alias, model_id, updated_at) VALUES (?, NULL, ?) ON CONFLICT (alias) DO UPDATE SET model_id = NULL, updated_at = excluded.updated_at',
        [alias, new Date().toISOString()],
      ),
    );
    this.userAliases.set(alias, null);
    this.snap = this.build();
  }

  async addCustom(entry: ModelEntry): Promise<ModelEntry> {
    if (this.snap.models.has(entry.id)) throw badRequest(`model '${entry.id}' already exists`);
    if (this.snap.aliases.has(entry.id)) throw badRequest(`'${entry.id}' is already an alias of model '${this.snap.aliases.get(entry.id)}'`);
    const provider = this.requireKnownProvider(entry.provider);
    const stored: ModelEntry = { ...entry, provider: provider.name, custom: true };
    await this.write('custom', stored.id, (t) =>
      t.run('INSERT INTO catalog_custom_models (id, provider, entry, created_at) VALUES (?, ?, ?, ?)', [
        stored.id,
        stored.provider,
        JSON.stringify(stored),
        new Date().toISOString(),
      ]),
    );
    this.custom = [...this.custom, stored];
    this.snap = this.build();
    return this.snap.models.get(stored.id)!;
  }

  private requireKnownProvider(name: string): ProviderEntry {
    const p = this.provider(name);
    if (!p) throw badRequest(`provider '${name}' not found`);
    return p;
  }

  async deleteCustom(id: string): Promise<void> {
    const m = this.snap.models.get(id);
    if (!m) throw notFound(`model '${id}' not found`);
    if (!m.custom) throw badRequest(`model '${id}' is a catalogue model; only custom models can be deleted`);
    await this.write('custom', id, (t) => t.run('DELETE FROM catalog_custom_models WHERE id = ?', [id]));
    this.custom = this.custom.filter((c) => c.id !== id);
    this.snap = this.build();
  }

  async setUrl(provider: ProviderEntry, url: string): Promise<string> {
    await this.write('urls', provider.name, (t) =>
      t.run(
        'INSERT INTO catalog_provider_urls (provider, base_url, updated_at) VALUES (?, ?, ?) ON CONFLICT (provider) DO UPDATE SET base_url = excluded.base_url, updated_at = excluded.updated_at',
        [provider.name, url, new Date().toISOString()],
      ),
    );
    this.urls.set(provider.name, url);
    return this.baseUrl(provider.name)!;
  }

  /** Removes a PUT /url override: the configured or catalogue URL applies again. */
  async clearUrl(provider: ProviderEntry): Promise<string> {
    await this.write('urls', provider.name, (t) => t.run('DELETE FROM catalog_provider_urls WHERE provider = ?', [provider.name]));
    this.urls.delete(provider.name);
    return this.baseUrl(provider.name)!;
  }

  version(): string {
    return this.registry?.version ?? this.builtinVersion;
  }

  status(): { version: string; last_update: string | null; provider_count: number; model_count: number; source: string } {
    return {
      version: this.version(),
      last_update: this.registry?.fetched_at ?? null,
      provider_count: this.snap.providers.size,
      model_count: this.snap.models.size,
      source: this.registry?.source ?? 'builtin',
    };
  }

  /** What replacing the registry layer with this content would change (catalogue models and media prices). */
  diff(content: RegistryContent): UpdateDiff {
    const before = this.snap.updatable();
    const after = this.build({ ...content, fetched_at: '' }).updatable();
    const diff: UpdateDiff = { added: 0, updated: 0, removed: 0 };
    for (const [key, entry] of after) {
      const old = before.get(key);
      if (old === undefined) diff.added++;
      else if (JSON.stringify(old) !== JSON.stringify(entry)) diff.updated++;
    }
    for (const key of before.keys()) if (!after.has(key)) diff.removed++;
    return diff;
  }

  /** Persists the new registry layer (atomic rename), then swaps the snapshot; the other processes read the file again. */
  async applyRegistry(content: RegistryContent): Promise<UpdateDiff> {
    const diff = this.diff(content);
    const state: RegistryState = { ...content, fetched_at: new Date().toISOString() };
    const next = this.build(state);
    const tmp = `${this.registryFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(state));
    renameSync(tmp, this.registryFile);
    this.registry = state;
    this.snap = next;
    for (const w of next.warnings) this.deps.log.warn(`catalog: ${w}`);
    await this.deps.changes.note('registry', content.version);
    return diff;
  }
}

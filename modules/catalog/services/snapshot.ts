/**
 * The merged, read-only view of the catalogue. Built from layers whenever one
 * changes (start, update, alias or custom-model edits: rare), so lookups and
 * GET /api/models are map reads and cached JSON text.
 */
import type { MediaModelEntry, ModelEntry, ProviderEntry } from '../api.ts';
import type { ProviderFile } from './schema.ts';

export interface Layers {
  /** Provider files in precedence order: shipped data, registry update, user files. Later ids replace earlier ones. */
  providerFiles: ProviderFile[][];
  /** Alias files in precedence order (later wins). */
  aliasFiles: Record<string, string>[];
  custom: ModelEntry[];
  /** User aliases; null hides an alias of the layers below. */
  userAliases: Map<string, string | null>;
}

export interface ListFilter {
  provider?: string;
  tier?: string;
}

export class Snapshot {
  readonly providers = new Map<string, ProviderEntry>();
  readonly models = new Map<string, ModelEntry>();
  readonly byProvider = new Map<string, ModelEntry[]>();
  readonly aliases = new Map<string, string>();
  /** Priced media models by provider, then by model id (ids are a provider's own: 'whisper-1' differs on Groq). */
  readonly mediaModels = new Map<string, Map<string, MediaModelEntry>>();
  /** Conflicts found while merging (logged by the owner). */
  readonly warnings: string[] = [];
  private readonly listCache = new Map<string, Buffer>();

  constructor(layers: Layers) {
    const files = new Map<string, ProviderFile>();
    for (const layer of layers.providerFiles) for (const f of layer) files.set(f.provider.id, f);
    const modelAliases: Array<[string, string]> = [];
    for (const f of [...files.values()].sort((a, b) => a.provider.id.localeCompare(b.provider.id))) {
      const p = f.provider;
      this.providers.set(p.id, {
        name: p.id,
        display_name: p.display_name,
        api_format: p.api_format,
        base_url: p.base_url,
        ...(p.env_var ? { env_var: p.env_var } : {}),
        key_required: p.key_required,
        ...(p.media_capabilities.length ? { media_capabilities: [...p.media_capabilities] } : {}),
      });
      this.mediaModels.set(p.id, new Map(f.media_models.map((m) => [m.id, Object.freeze({ ...m, provider: p.id })])));
      for (const m of f.models) {
        const clash = this.models.get(m.id);
        if (clash) {
          this.warnings.push(`model '${m.id}' of provider '${p.id}' ignored: the id belongs to provider '${clash.provider}'`);
          continue;
        }
        this.models.set(m.id, {
          id: m.id,
          provider: p.id,
          display_name: m.display_name,
          tier: m.tier,
          context_window: m.context_window,
          ...(m.max_output_tokens ? { max_output_tokens: m.max_output_tokens } : {}),
          input_cost_per_1m: m.input_cost_per_1m,
          output_cost_per_1m: m.output_cost_per_1m,
          supports_tools: m.supports_tools,
          supports_vision: m.supports_vision,
          supports_streaming: m.supports_streaming,
        });
        for (const a of m.aliases) modelAliases.push([a, m.id]);
      }
    }
    for (const c of layers.custom) {
      if (!this.providers.has(c.provider)) {
        this.warnings.push(`custom model '${c.id}' ignored: provider '${c.provider}' is not in the catalogue`);
        continue;
      }
      if (this.models.has(c.id)) this.warnings.push(`custom model '${c.id}' replaces the catalogue entry with that id`);
      this.models.set(c.id, { ...c, aliases: undefined, custom: true });
      for (const a of c.aliases ?? []) modelAliases.push([a, c.id]);
    }
    this.mergeAliases(modelAliases, layers);
    this.index();
  }

  private mergeAliases(modelAliases: Array<[string, string]>, layers: Layers): void {
    const set = (alias: string, target: string) => {
      if (this.models.has(alias)) this.warnings.push(`alias '${alias}' ignored: it is a model id`);
      else this.aliases.set(alias, target);
    };
    for (const [alias, target] of modelAliases) {
      if (!this.aliases.has(alias)) set(alias, target);
    }
    for (const file of layers.aliasFiles) for (const [alias, target] of Object.entries(file)) set(alias, target);
    for (const [alias, target] of layers.userAliases) {
      if (target === null) this.aliases.delete(alias);
      else set(alias, target);
    }
    for (const [alias, target] of this.aliases) {
      if (!this.models.has(target)) {
        this.warnings.push(`alias '${alias}' ignored: model '${target}' is not in the catalogue`);
        this.aliases.delete(alias);
      }
    }
  }

  /** Final entries (with their aliases), frozen, grouped by provider. */
  private index(): void {
    const aliasesOf = new Map<string, string[]>();
    for (const [alias, target] of this.aliases) aliasesOf.set(target, [...(aliasesOf.get(target) ?? []), alias]);
    for (const [id, m] of this.models) {
      const entry = Object.freeze({ ...m, aliases: aliasesOf.get(id) ?? [] });
      this.models.set(id, entry);
      const list = this.byProvider.get(m.provider) ?? [];
      list.push(entry);
      this.byProvider.set(m.provider, list);
    }
  }

  /** What a registry update can change, by key: the catalogue's models (not custom ones) and the media prices. */
  updatable(): Map<string, ModelEntry | MediaModelEntry> {
    const out = new Map<string, ModelEntry | MediaModelEntry>();
    for (const [id, m] of this.models) if (!m.custom) out.set(`model\u0000${id}`, m);
    for (const [provider, list] of this.mediaModels) for (const [id, m] of list) out.set(`media\u0000${provider}\u0000${id}`, m);
    return out;
  }

  resolveAlias(name: string): string {
    return this.aliases.get(name) ?? name;
  }

  model(idOrAlias: string): ModelEntry | undefined {
    return this.models.get(idOrAlias) ?? this.models.get(this.aliases.get(idOrAlias) ?? '');
  }

  list(filter: ListFilter = {}): ModelEntry[] {
    const base = filter.provider !== undefined ? (this.byProvider.get(filter.provider) ?? []) : [...this.models.values()];
    return filter.tier !== undefined ? base.filter((m) => m.tier === filter.tier) : base;
  }

  /** The GET /api/models body, serialized and encoded once per filter and snapshot. */
  listJson(filter: ListFilter): Buffer {
    const key = `${filter.provider ?? ''}\u0000${filter.tier ?? ''}`;
    let json = this.listCache.get(key);
    if (json === undefined) {
      const models = this.list(filter);
      json = Buffer.from(JSON.stringify({ models, total: models.length }));
      if (this.listCache.size < 500) this.listCache.set(key, json);
    }
    return json;
  }
}

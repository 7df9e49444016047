/**
 * The hub registry's MCP templates (`mcp/<id>.toml`) as a layer of the catalogue, source 'registry:hub'. Read from
 * the registry's last sync at start, on POST /api/mcp/reload and each time the hub syncs (hub.synced) — none of
 * which starts a first download — and on POST /api/catalog/update, which syncs the hub first. A failed sync keeps
 * the templates of the last good one; without the hub module the built-in templates stay the catalogue.
 */
import type { Logger } from 'pino';
import { parse as parseToml } from 'smol-toml';
import type { CatalogPartOutcome } from '@talon/catalog';
import type { RegistryService } from '@talon/hub';
import { toTemplate, type Catalog, type Template } from './catalog.ts';

const REGISTRY = 'hub';
export const REGISTRY_SOURCE = `registry:${REGISTRY}`;

export class RegistryLayer {
  /** The read under way: a sync's own update and its hub.synced event share one. */
  private reading?: Promise<number | undefined>;

  constructor(
    private readonly catalog: Catalog,
    private readonly registry: () => RegistryService | undefined,
    private readonly log: Logger,
  ) {}

  /** Reads the templates of the registry's last sync into the catalogue; the number read, or undefined (no hub, never synced). */
  refresh(): Promise<number | undefined> {
    this.reading ??= this.readIntoCatalog().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async readIntoCatalog(): Promise<number | undefined> {
    const registry = this.registry();
    if (!registry || registry.status(REGISTRY).revision === null) return undefined;
    const templates = await this.read(registry);
    this.catalog.setRegistry(templates);
    return templates.length;
  }

  /**
   * POST /api/catalog/update: syncs the hub registry, then reads it; undefined without the hub module. After a failed
   * sync nothing is read (a registry folder is read in place: gone, it would empty the layer).
   */
  async update(): Promise<CatalogPartOutcome | undefined> {
    const registry = this.registry();
    if (!registry) return undefined;
    const status = await registry.sync(REGISTRY);
    if (status.offline) {
      const count = this.catalog.registryCount();
      const error = `the hub registry could not be synced (${status.error ?? 'no reason given'}); the catalogue keeps the ${count} templates of its last sync`;
      return { status: 'failed', source: REGISTRY_SOURCE, count, error };
    }
    try {
      const count = (await this.refresh()) ?? 0;
      this.log.info({ templates: count, revision: status.revision }, 'MCP catalogue updated from the hub registry');
      return { status: 'updated', source: REGISTRY_SOURCE, count };
    } catch (err) {
      return {
        status: 'failed',
        source: REGISTRY_SOURCE,
        count: this.catalog.registryCount(),
        error: `the hub registry could not be read: ${(err as Error).message}`,
      };
    }
  }

  private async read(registry: RegistryService): Promise<Template[]> {
    const out: Template[] = [];
    for (const entry of await registry.entries('mcp', REGISTRY)) {
      try {
        const text = await registry.readEntry('mcp', entry.slug, REGISTRY);
        if (text !== undefined) out.push(toTemplate(parseToml(text) as Record<string, unknown>, REGISTRY_SOURCE));
      } catch (err) {
        this.log.warn({ where: `${REGISTRY_SOURCE} mcp/${entry.slug}.toml`, err: (err as Error).message }, 'MCP catalogue template skipped');
      }
    }
    return out;
  }
}

/** /api/catalog: update from the configured registry, and status. */
import { HttpError, type Routes } from '@talon/module-sdk';
import type { CatalogConfig } from '../config.ts';
import { readRegistry, RegistryError } from '../services/registry.ts';
import type { CatalogStore, RegistryContent } from '../services/store.ts';
import type { CatalogPartOutcome } from '@talon/catalog';
import { statusResponse, updateResponse } from './responses.ts';

interface Deps {
  store: CatalogStore;
  config: () => CatalogConfig;
  home: string;
  /** Runs the catalog.hooks update taps. */
  updateParts: (report: { parts: Record<string, CatalogPartOutcome> }) => Promise<void>;
}

export function catalogRoutes(app: Routes, { store, config, home, updateParts }: Deps): void {
  const tags = ['catalog'];

  app.post(
    '/api/catalog/update',
    {
      schema: {
        summary: 'Update the catalogue from the configured registry (and the catalogues of other modules from theirs)',
        tags,
        response: { 200: updateResponse },
      },
    },
    async (request) => {
      let content: RegistryContent | undefined;
      let unconfigured: RegistryError | undefined;
      try {
        content = await readRegistry(config(), home);
      } catch (err) {
        if (!(err instanceof RegistryError)) throw err;
        if (!err.notConfigured) throw new HttpError(502, `catalog update failed, the catalogue is unchanged: ${err.message}`);
        unconfigured = err;
      }
      const report: { parts: Record<string, CatalogPartOutcome> } = { parts: {} };
      await updateParts(report);
      const parts = Object.keys(report.parts).length ? { parts: report.parts } : undefined;
      if (!content) {
        if (!parts) throw new HttpError(400, `catalog update failed, the catalogue is unchanged: ${unconfigured?.message}`);
        const any = Object.values(report.parts).some((p) => p.status === 'updated');
        return {
          status: any ? ('updated' as const) : ('unchanged' as const),
          added: 0,
          updated: 0,
          removed: 0,
          version: store.status().version,
          models: 'not_configured' as const,
          ...parts,
        };
      }
      const diff = await store.applyRegistry(content);
      request.log.info(`catalog updated to ${content.version} from ${content.source}: +${diff.added} ~${diff.updated} -${diff.removed}`);
      return { status: 'updated' as const, ...diff, version: content.version, ...parts };
    },
  );

  app.get(
    '/api/catalog/status',
    { schema: { summary: 'Catalogue version, last update and pending changes', tags, response: { 200: statusResponse } } },
    async () => {
      // Only a local registry folder is compared (cheap); a remote one is read on update, never on a status call.
      let available_updates = 0;
      const cfg = config();
      if (cfg.registry_dir) {
        try {
          const d = store.diff(await readRegistry(cfg, home));
          available_updates = d.added + d.updated + d.removed;
        } catch {
          // an unreadable registry offers no update; POST /api/catalog/update reports why
        }
      }
      return { ...store.status(), available_updates };
    },
  );
}

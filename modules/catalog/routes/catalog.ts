/** /api/catalog: update from the configured registry, and status. */
import { HttpError, type Routes } from '@talon/module-sdk';
import type { CatalogConfig } from '../config.ts';
import { readRegistry, RegistryError } from '../services/registry.ts';
import type { CatalogStore } from '../services/store.ts';
import { statusResponse, updateResponse } from './responses.ts';

interface Deps {
  store: CatalogStore;
  config: () => CatalogConfig;
  home: string;
}

export function catalogRoutes(app: Routes, { store, config, home }: Deps): void {
  const tags = ['catalog'];

  app.post(
    '/api/catalog/update',
    { schema: { summary: 'Update the catalogue from the configured registry', tags, response: { 200: updateResponse } } },
    async (request) => {
      let content;
      try {
        content = await readRegistry(config(), home);
      } catch (err) {
        if (!(err instanceof RegistryError)) throw err;
        throw new HttpError(err.notConfigured ? 400 : 502, `catalog update failed, the catalogue is unchanged: ${err.message}`);
      }
      const diff = store.applyRegistry(content);
      request.log.info(`catalog updated to ${content.version} from ${content.source}: +${diff.added} ~${diff.updated} -${diff.removed}`);
      return { status: 'updated' as const, ...diff, version: content.version };
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

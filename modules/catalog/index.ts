import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { catalogHooks, catalogService } from '@talon/catalog';
import { providerKeys } from '@talon/secrets';
import { configKeys, configSchema, type CatalogConfig } from './config.ts';
import { CatalogStore, LAYERS } from './services/store.ts';
import { DeviceFlows } from './services/device-flow.ts';
import { modelRoutes } from './routes/models.ts';
import { providerRoutes } from './routes/providers.ts';
import { catalogRoutes } from './routes/catalog.ts';

export default defineModule<CatalogConfig>({
  configSchema,
  configKeys,
  hooks: [catalogHooks],
  register(ctx) {
    const store = new CatalogStore({
      store: ctx.store,
      changes: ctx.changes,
      keys: () => ctx.use(providerKeys),
      log: ctx.log,
      shippedDir: path.join(ctx.dir, 'bundled'),
      home: ctx.home,
      stateDir: () => ctx.dataDir,
      providerUrls: () => ctx.config.provider_urls,
    });
    const flows = new DeviceFlows(ctx.store);
    const config = () => ctx.config;
    ctx.provide(catalogService, store);
    return {
      async start() {
        // Another process of the home changed a layer: read it again (heard from before the load, so no note is missed).
        for (const layer of LAYERS) ctx.changes.on(layer, () => store.reload(layer));
        await store.load();
      },
      routes(app) {
        modelRoutes(app, store);
        providerRoutes(app, { store, flows, config });
        catalogRoutes(app, { store, config, home: ctx.home, updateParts: (report) => ctx.hooks.get(catalogHooks).update.promise(report) });
      },
    };
  },
});

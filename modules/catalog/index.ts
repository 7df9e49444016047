import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { catalogHooks, catalogService, secretVault } from '@talon/catalog';
import { configKeys, configSchema, type CatalogConfig } from './config.ts';
import { CatalogStore } from './services/store.ts';
import { DeviceFlows } from './services/device-flow.ts';
import { modelRoutes } from './routes/models.ts';
import { providerRoutes } from './routes/providers.ts';
import { catalogRoutes } from './routes/catalog.ts';
import { SecretBox } from './services/secrets.ts';

export default defineModule<CatalogConfig>({
  configSchema,
  configKeys,
  hooks: [catalogHooks],
  register(ctx) {
    const store = new CatalogStore({
      db: ctx.db,
      log: ctx.log,
      shippedDir: path.join(ctx.dir, 'data'),
      home: ctx.home,
      stateDir: () => ctx.dataDir,
      providerUrls: () => ctx.config.provider_urls,
    });
    const flows = new DeviceFlows();
    const config = () => ctx.config;
    ctx.provide(catalogService, store);
    ctx.provide(secretVault, new SecretBox(path.join(ctx.home, 'secret.key')));
    return {
      start: () => store.load(),
      routes(app) {
        modelRoutes(app, store);
        providerRoutes(app, { store, flows, config });
        catalogRoutes(app, { store, config, home: ctx.home, updateParts: (report) => ctx.hooks.get(catalogHooks).update.promise(report) });
      },
    };
  },
});

import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { catalogService } from './api.ts';
import { configSchema, type CatalogConfig } from './config.ts';
import { CatalogStore } from './services/store.ts';
import { DeviceFlows } from './services/device-flow.ts';
import { modelRoutes } from './routes/models.ts';
import { providerRoutes } from './routes/providers.ts';
import { catalogRoutes } from './routes/catalog.ts';

interface State {
  store: CatalogStore;
  flows: DeviceFlows;
}

let state: State | undefined;

export default defineModule<CatalogConfig>({
  configSchema,
  register(ctx) {
    const store = new CatalogStore({
      db: ctx.db,
      log: ctx.log,
      dataDir: path.join(ctx.dir, 'data'),
      home: ctx.paths.home,
      stateDir: ctx.paths.data,
      settings: () => ctx.settings,
    });
    state = { store, flows: new DeviceFlows() };
    ctx.provide(catalogService, store);
  },
  start() {
    state!.store.load();
  },
  routes(app, ctx) {
    const { store, flows } = state!;
    modelRoutes(app, store);
    providerRoutes(app, { store, flows, config: () => ctx.config });
    catalogRoutes(app, { store, config: () => ctx.config, home: ctx.paths.home });
  },
});

import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { mediaHooks, type MediaDriverFactory } from '@talon/media';
import { localMediaConfigSchema, type LocalMediaConfig } from './config.ts';
import { localMediaDriver } from './driver.ts';

export default defineModule<LocalMediaConfig>({
  configSchema: localMediaConfigSchema,
  register(ctx) {
    // ctx.dir, not import.meta.url: module code is bundled; the WebAssembly Flite is resolved from the module's folder.
    const from = path.join(ctx.dir, 'index.ts');
    const factory: MediaDriverFactory = { name: 'local', create: (kit) => localMediaDriver(kit, () => ctx.config, from) };
    // The tap goes with this copy of the module when it stops or reloads.
    ctx.hooks.tap(mediaHooks).drivers.tap('local', (list) => [...list, factory]);
  },
});

import { defineModule } from '@talon/module-sdk';
import { mediaHooks, type MediaDriverFactory } from '@talon/media';
import { elevenlabsConfigSchema, type ElevenlabsConfig } from './config.ts';
import { elevenlabsDriver } from './driver.ts';

export default defineModule<ElevenlabsConfig>({
  configSchema: elevenlabsConfigSchema,
  register(ctx) {
    const factory: MediaDriverFactory = { name: 'elevenlabs', create: (kit) => elevenlabsDriver(kit, () => ctx.config) };
    // The tap goes with this copy of the module when it stops or reloads.
    ctx.hooks.tap(mediaHooks).drivers.tap('elevenlabs', (list) => [...list, factory]);
  },
});

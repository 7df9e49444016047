import { defineModule } from '@talon/module-sdk';
import { mediaHooks, type MediaDriverFactory } from '@talon/media';
import { openaiMediaConfigSchema, type OpenaiMediaConfig } from './config.ts';
import { openaiMediaDriver } from './driver.ts';

export default defineModule<OpenaiMediaConfig>({
  configSchema: openaiMediaConfigSchema,
  register(ctx) {
    const factory: MediaDriverFactory = { name: 'openai', create: (kit) => openaiMediaDriver(kit, () => ctx.config) };
    // The tap goes with this copy of the module when it stops or reloads.
    ctx.hooks.tap(mediaHooks).drivers.tap('openai', (list) => [...list, factory]);
  },
});

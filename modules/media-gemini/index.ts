import { defineModule } from '@talon/module-sdk';
import { mediaHooks, type MediaDriverFactory } from '@talon/media';
import { geminiDriver } from './driver.ts';

export default defineModule({
  register(ctx) {
    const factory: MediaDriverFactory = { name: 'gemini', create: geminiDriver };
    // The tap goes with this copy of the module when it stops or reloads.
    ctx.hooks.tap(mediaHooks).drivers.tap('media-gemini', (list) => [...list, factory]);
  },
});

import { defineModule } from '@talon/module-sdk';
import { mediaHooks, type MediaDriverFactory } from '@talon/media';
import { minimaxDriver } from './driver.ts';

export default defineModule({
  register(ctx) {
    const factory: MediaDriverFactory = { name: 'minimax', create: minimaxDriver };
    // The tap goes with this copy of the module when it stops or reloads.
    ctx.hooks.tap(mediaHooks).drivers.tap('media-minimax', (list) => [...list, factory]);
  },
});

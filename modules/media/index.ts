import { defineModule } from '@talon/module-sdk';
import { catalogService } from '@talon/catalog';
import { mediaDriverKit, mediaEvents, mediaHooks } from '@talon/media';
import { netFetch } from '@talon/net';
import { mediaConfigSchema, type MediaConfig } from './config.ts';
import { createKit } from './services/kit/index.ts';

export default defineModule<MediaConfig>({
  configSchema: mediaConfigSchema,
  hooks: [mediaHooks],
  events: [mediaEvents],
  register(ctx) {
    const kit = createKit({ catalog: ctx.use(catalogService), net: ctx.use(netFetch) });
    ctx.provide(mediaDriverKit, kit);
  },
});

import { defineModule } from '@talon/module-sdk';
import { uploadFiles } from '@talon/agents';
import { catalogService } from '@talon/catalog';
import { llmService } from '@talon/llm';
import { mediaDriverKit, mediaEvents, mediaHooks, mediaService, type MediaCallRecord } from '@talon/media';
import { netFetch } from '@talon/net';
import { mediaConfigSchema, type MediaConfig } from './config.ts';
import { mediaRoutes } from './routes/media.ts';
import { transcribeRoutes } from './routes/transcribe.ts';
import { videoRoutes } from './routes/video.ts';
import { videoListRoutes } from './routes/video-list.ts';
import { createDriverRegistry } from './services/drivers.ts';
import { createKit } from './services/kit/index.ts';
import { createMedia } from './services/media-service.ts';
import { tapMediaTools } from './services/tools/index.ts';
import { VideoGate } from './services/video/gate.ts';
import { createVideoTasks } from './services/video/index.ts';

export default defineModule<MediaConfig>({
  configSchema: mediaConfigSchema,
  hooks: [mediaHooks],
  events: [mediaEvents],
  register(ctx) {
    const catalog = ctx.use(catalogService);
    const videoGate = new VideoGate();
    const kit = createKit({ catalog, net: ctx.use(netFetch), maxResultBytes: () => ctx.config.max_result_bytes, videoGate });
    const hooks = () => ctx.hooks.get(mediaHooks);
    const events = ctx.events.of(mediaEvents);
    const files = () => ctx.use(uploadFiles);
    const registry = createDriverRegistry({
      factories: () => hooks().drivers.call([]),
      kit,
      order: () => ctx.config.provider_order,
      catalogue: () => catalog.providers().map((p) => p.name),
      log: ctx.log,
    });
    const afterCall = (record: MediaCallRecord) => hooks().afterCall.promise(record);
    const video = createVideoTasks({
      store: ctx.store,
      nodes: ctx.nodes,
      config: () => ctx.config,
      log: ctx.log,
      driver: (provider) => registry.find(provider),
      files,
      probe: (bytes) => kit.probe(bytes),
      afterCall,
      events,
      gate: videoGate,
      track: (work) => ctx.track(work),
      signal: ctx.signal,
    });
    const { service, core } = createMedia({
      registry,
      kit,
      files,
      events,
      video,
      config: () => ctx.config,
      log: ctx.log,
      keyOf: (provider) => catalog.provider(provider)?.env_var,
      hooks: { beforeCall: (check) => hooks().beforeCall.promise(check), afterCall },
    });
    ctx.provide(mediaDriverKit, kit);
    ctx.provide(mediaService, service);
    tapMediaTools(ctx, { service, core, kit, files, catalog, llm: () => ctx.tryUse(llmService) });
    // A dead process's video tasks are polled here at once.
    ctx.nodes.onDead((node) => ctx.track(video.takeOver(node)));
    return {
      run: (signal) => video.run(signal),
      routes(app) {
        mediaRoutes(app, () => service);
        transcribeRoutes(
          app,
          () => service,
          () => ctx.config.max_transcribe_bytes,
        );
        videoRoutes(app, () => service);
        videoListRoutes(app, ctx.store);
      },
    };
  },
});

import { defineModule } from '@talon/module-sdk';
import { channelEvents, channelHooks, channelKit, channelService } from '@talon/channels';
import { channelsConfigSchema, type ChannelsConfig } from './config.ts';
import { buildChannels } from './services/channels.ts';
import { channelRoutes } from './routes/channels.ts';
import { journalRoutes } from './routes/journal.ts';
import * as kit from './kit/index.ts';
import { tapHomeChannel } from './services/home.ts';
import { registerChannelMetrics } from './services/metrics.ts';
import { tapOwnerNotices } from './services/notices.ts';
import { tapChannelTools } from './services/tools.ts';

export default defineModule<ChannelsConfig>({
  configSchema: channelsConfigSchema,
  hooks: [channelHooks],
  events: [channelEvents],
  register(ctx) {
    const parts = buildChannels(ctx);
    // Work taken over from a dead process waits for this copy's adapters: its replies need their connections.
    let started!: () => void;
    const adaptersStarted = new Promise<void>((resolve) => (started = resolve));
    ctx.provide(channelService, parts.service);
    ctx.provide(channelKit, kit);
    tapChannelTools(ctx, parts.service);
    tapOwnerNotices(ctx, parts.service);
    tapHomeChannel(ctx, parts);
    registerChannelMetrics(ctx, parts);
    // An adapter module loaded or reloaded after this one: its channel starts when configured.
    ctx.hooks.kernel.module.loaded.tap('channels', () => void ctx.track(parts.runtime.startAll()));
    ctx.nodes.onDead((node) =>
      ctx.track(
        (async () => {
          const dedup = parts.runtime
            .list()
            .filter((r) => r.adapter.capabilities.platformDedup)
            .map((r) => r.adapter.name);
          await parts.journal.release(node, dedup);
          await adaptersStarted;
          // Its channels start here (when on standby) before its work is recovered: the replies need them.
          await parts.runtime.takeOver(node);
          await parts.recover();
        })(),
      ),
    );
    return {
      run: async () => {
        await parts.runtime.startAll();
        started();
        // Leases held here are renewed; a standby channel whose holder's lease ended starts here.
        ctx.setInterval(() => parts.runtime.tick(), Math.max(50, Math.floor(ctx.nodes.leaseMs / 3)));
        await parts.recover();
      },
      stop: () => parts.runtime.stopAll(),
      routes(app) {
        channelRoutes(app, parts);
        journalRoutes(app, parts, () => ctx.config.not_after_minutes * 60_000);
      },
    };
  },
});

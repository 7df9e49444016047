import { defineModule } from '@talon/module-sdk';
import { agentRegistry, agentRunner } from '@talon/agents';
import { authStatus } from '@talon/auth';
import { hooksConfigSchema, type HooksConfig } from './config.ts';
import { MinuteWindow } from './services/rate.ts';
import { checkToken } from './services/token.ts';
import { WakeInbox } from './services/wakes.ts';
import { hookRoutes } from './routes/hooks.ts';

const PRUNE_MS = 3_600_000;

export default defineModule<HooksConfig>({
  configSchema: hooksConfigSchema,
  register(ctx) {
    checkToken(ctx.config, ctx.tryUse(authStatus));
    const window = new MinuteWindow();
    const wakes = new WakeInbox(ctx.store, ctx.events, ctx.log, () => ctx.config.hold_delivery, ctx.nodes);
    // Wakes left undelivered (a crash after the answer, or held) go out once every module listens: at boot when the
    // service is ready, after a hot reload at once, and when hold_delivery is turned off.
    const deliver = () => void wakes.deliverPending();
    ctx.hooks.kernel.kernel.ready.tap('hooks-inbound', deliver);
    ctx.hooks.kernel.config.changed.tapPromise('hooks-inbound', async () => deliver());
    // A dead process's claimed wakes are published by a live one (one claim wins).
    ctx.nodes.onDead(async (dead) => {
      if (await wakes.release(dead)) deliver();
    });
    return {
      async start() {
        // Claims of processes that are gone (also those that died while none ran) go out again.
        await wakes.releaseAllBut(await ctx.nodes.live());
        const prune = () => wakes.prune(ctx.config.wake_retention_days);
        await prune();
        ctx.setInterval(prune, PRUNE_MS);
        if (ctx.kernel.listenAddress()) deliver();
      },
      routes: (app) =>
        hookRoutes(app, {
          config: () => ctx.config,
          auth: () => ctx.tryUse(authStatus),
          agents: () => ctx.use(agentRegistry),
          runner: () => ctx.use(agentRunner),
          wakes,
          window,
        }),
    };
  },
});

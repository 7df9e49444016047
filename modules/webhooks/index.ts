import { defineModule } from '@talon/module-sdk';
import { secretVault } from '@talon/secrets';
import { netFetch } from '@talon/net';
import { webhooksConfigSchema, type WebhooksConfig } from './config.ts';
import { Dispatcher } from './services/dispatcher.ts';
import { Hooks } from './services/hooks.ts';
import { HOOKS_TOPIC, HookStore } from './services/store.ts';
import { eventHookRoutes, outboundRoutes } from './routes/webhooks.ts';

/** Bus events waiting to be journalled; the handler only writes a row, so this is never reached in practice. */
const QUEUE = 100_000;
const PRUNE_MS = 3_600_000;

export default defineModule<WebhooksConfig>({
  configSchema: webhooksConfigSchema,
  register(ctx) {
    const store = new HookStore(ctx.store, (t) => ctx.changes.note(HOOKS_TOPIC, '', t));
    const net = () => ctx.use(netFetch);
    const vault = () => ctx.use(secretVault);
    const config = () => ctx.config;
    const node = ctx.nodes;
    const dispatcher = new Dispatcher({ store, net, vault, config, log: ctx.log, setTimeout: ctx.setTimeout, node });
    const hooks = new Hooks({ store, net, vault, config, kick: () => dispatcher.pump() });
    // Local events only (the default): the process where an event happened journals its deliveries, once.
    ctx.events.subscribe('*', (event) => hooks.onEvent(event), { queue: QUEUE });
    // Another process changed the webhooks: its subscriber list is read again at the next event.
    ctx.changes.on(HOOKS_TOPIC, () => store.invalidate());
    // A dead process's claims go back to pending, and this one sends them (or another live one: one claim wins).
    ctx.nodes.onDead(async (dead) => {
      if (await store.release(dead)) dispatcher.pump();
    });
    return {
      async start() {
        // Claims of processes that are gone (also those that died while none ran) are sent again.
        const live = await ctx.nodes.live();
        await store.releaseAllBut(live);
        // A restart is a good moment to retry: what waited for a backoff is sent now, except where a live process set
        // that backoff (it keeps its own schedule).
        await store.resumeAll(live);
        dispatcher.pump();
        const prune = () => store.prune(new Date(Date.now() - ctx.config.journal_retention_days * 86_400_000));
        await prune();
        ctx.setInterval(prune, PRUNE_MS);
      },
      stop: () => dispatcher.stop(),
      routes(app) {
        eventHookRoutes(app, hooks, store);
        outboundRoutes(app, hooks, store);
      },
    };
  },
});

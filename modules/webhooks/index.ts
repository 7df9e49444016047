import { defineModule } from '@talon/module-sdk';
import { secretVault } from '@talon/catalog';
import { safeNet } from '@talon/tools';
import { webhooksConfigSchema, type WebhooksConfig } from './config.ts';
import { Dispatcher } from './services/dispatcher.ts';
import { Hooks } from './services/hooks.ts';
import { HookStore } from './services/store.ts';
import { eventHookRoutes, outboundRoutes } from './routes/webhooks.ts';

/** Bus events waiting to be journalled; the handler only writes a row, so this is never reached in practice. */
const QUEUE = 100_000;
const PRUNE_MS = 3_600_000;

export default defineModule<WebhooksConfig>({
  configSchema: webhooksConfigSchema,
  register(ctx) {
    const store = new HookStore(ctx.db);
    const net = () => ctx.use(safeNet);
    const vault = () => ctx.use(secretVault);
    const config = () => ctx.config;
    const dispatcher = new Dispatcher({ store, net, vault, config, log: ctx.log, setTimeout: ctx.setTimeout });
    const hooks = new Hooks({ store, net, vault, config, kick: () => dispatcher.pump() });
    ctx.events.subscribe('*', (event) => hooks.onEvent(event), { queue: QUEUE });
    return {
      start() {
        // A restart is a good moment to retry: whatever waited for a backoff is sent now.
        store.resumeAll();
        dispatcher.pump();
        const prune = () => store.prune(new Date(Date.now() - ctx.config.journal_retention_days * 86_400_000));
        prune();
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

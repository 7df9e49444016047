import { defineModule, type ModuleContext, type SseWriter } from '@talon/module-sdk';
import { streamRoutes } from './routes/stream.ts';

const streams = new WeakMap<ModuleContext, Set<SseWriter>>();

export default defineModule({
  register(ctx) {
    const open = new Set<SseWriter>();
    streams.set(ctx, open);
    const closeAll = () => {
      for (const sse of [...open]) sse.close();
    };
    // Unloading ends the streams (each close unsubscribes); clients reconnect to the next copy.
    ctx.onStop(closeAll);
    // At shutdown, end them before the kernel waits for open requests to drain.
    ctx.hooks.kernel.kernel.shutdown.tapPromise('logs: end streams', async () => closeAll());
  },
  routes(app, ctx) {
    const open = streams.get(ctx);
    if (!open) throw new Error('logs module not registered');
    streamRoutes(app, ctx, open);
  },
});

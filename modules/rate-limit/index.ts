import { defineModule, type ModuleContext } from '@talon/module-sdk';
import { Gcra } from './services/gcra.ts';
import { defaultCost } from './services/cost.ts';

/** The burst is one minute of rate: a client may spend a minute's budget at once. */
const BURST_SECONDS = 60;
const SWEEP_MS = 60_000;

/** The limiter of each loaded copy (a hot reload starts from a fresh one). */
const limiters = new WeakMap<ModuleContext, Gcra>();

export default defineModule({
  register(ctx) {
    limiters.set(ctx, new Gcra());
  },
  start(ctx) {
    ctx.setInterval(() => {
      const removed = limiters.get(ctx)?.sweep(Date.now()) ?? 0;
      if (removed) ctx.log.debug({ removed }, 'rate limiter: forgot clients whose budget is full again');
    }, SWEEP_MS);
  },
  http(app, ctx) {
    const gcra = limiters.get(ctx);
    if (!gcra) throw new Error('rate limiter not registered');
    // A callback hook: no promise per request on the hot path (every request passes here).
    app.addHook('onRequest', (request, reply, done) => {
      const pattern = request.routeOptions.url ?? request.url.split('?')[0];
      const cost = request.routeOptions.config?.rateCost ?? defaultCost(request.method, pattern);
      // Settings are read live: a changed rate applies to the next request.
      const result = gcra.take(request.ip, cost, Date.now(), { ratePerSecond: ctx.settings.rate_limit_per_second, burstSeconds: BURST_SECONDS });
      if (result.allowed) return done();
      const retryAfter = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
      request.log.info({ ip: request.ip, cost, retryAfter }, 'rate limit exceeded');
      void reply.code(429).header('retry-after', String(retryAfter)).send({ error: 'Rate limit exceeded' });
    });
  },
});

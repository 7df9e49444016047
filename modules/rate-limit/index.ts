import { defineModule } from '@talon/module-sdk';
import { Gcra } from './services/gcra.ts';
import { defaultCost } from './services/cost.ts';
import { rateConfigKeys, type RateConfig } from './config.ts';

/** The burst is one minute of rate: a client may spend a minute's budget at once. */
const BURST_SECONDS = 60;
const SWEEP_MS = 60_000;

export default defineModule<RateConfig>({
  configKeys: rateConfigKeys,
  // The reference counts requests per minute.
  configAliases: [{ from: 'rate_limit.api_requests_per_minute', to: 'rate_limit_per_second', convert: (v) => (typeof v === 'number' ? v / 60 : v) }],
  register(ctx) {
    // Each loaded copy has its own limiter: a hot reload starts from a fresh one.
    const gcra = new Gcra();
    return {
      start() {
        ctx.setInterval(() => {
          const removed = gcra.sweep(Date.now());
          if (removed) ctx.log.debug({ removed }, 'rate limiter: forgot clients whose budget is full again');
        }, SWEEP_MS);
      },
      // Before authentication: a refused credential is charged like any request, so guessing the key is limited too.
      httpStage: 'limit',
      http(app) {
        // A callback hook: no promise per request on the hot path (every request passes here).
        app.addHook('onRequest', (request, reply, done) => {
          const cost = request.routeOptions.config?.rateCost ?? defaultCost(request.method);
          // Read live: a changed rate applies to the next request.
          const result = gcra.take(request.ip, cost, Date.now(), { ratePerSecond: ctx.config.rate_limit_per_second, burstSeconds: BURST_SECONDS });
          if (result.allowed) return done();
          const retryAfter = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
          request.log.info({ ip: request.ip, cost, retryAfter }, 'rate limit exceeded');
          void reply.code(429).header('retry-after', String(retryAfter)).send({ error: 'Rate limit exceeded' });
        });
      },
    };
  },
});

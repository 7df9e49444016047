import { defineModule, type FastifyReply, type FastifyRequest } from '@talon/module-sdk';
import { Gcra, type GcraResult } from './services/gcra.ts';
import { StoredGcra } from './services/stored-gcra.ts';
import { FleetShare, refreshEvery } from './services/fleet-share.ts';
import { defaultCost } from './services/cost.ts';
import { rateConfigKeys, rateConfigSchema, type RateConfig } from './config.ts';

/** The burst is one minute of rate: a client may spend a minute's budget at once. */
const BURST_SECONDS = 60;
const SWEEP_MS = 60_000;

const limits = (ratePerSecond: number) => ({ ratePerSecond, burstSeconds: BURST_SECONDS });

function refuse(request: FastifyRequest, reply: FastifyReply, cost: number, retryAfterMs: number): void {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
  request.log.info({ ip: request.ip, cost, retryAfter }, 'rate limit exceeded');
  void reply.code(429).header('retry-after', String(retryAfter)).send({ error: 'Rate limit exceeded' });
}

export default defineModule<RateConfig>({
  configKeys: rateConfigKeys,
  configSchema: rateConfigSchema,
  // The reference counts requests per minute.
  configAliases: [{ from: 'rate_limit.api_requests_per_minute', to: 'rate_limit_per_second', convert: (v) => (typeof v === 'number' ? v / 60 : v) }],
  register(ctx) {
    // Each loaded copy has its own limiter: a hot reload starts from a fresh one.
    const gcra = new Gcra();
    const stored = new StoredGcra(ctx.store);
    const share = new FleetShare(ctx.nodes);
    // Read live: a changed rate or mode applies to the next request.
    const exact = () => ctx.config.fleet === 'exact';
    const local = (ip: string, cost: number) => gcra.take(ip, cost, Date.now(), limits(share.share(ctx.config.rate_limit_per_second)));
    let degraded = false;
    return {
      async start() {
        await share.refresh();
        // Kept fresh in exact mode too: it is what this node falls back on when the database does not answer.
        ctx.setInterval(
          () => share.refresh().catch((err: unknown) => ctx.log.warn({ err }, 'rate limiter: could not count the live nodes')),
          refreshEvery(ctx.nodes),
        );
        ctx.setInterval(async () => {
          const removed = gcra.sweep(Date.now()) + (exact() ? await stored.sweep(Date.now()) : 0);
          if (removed) ctx.log.debug({ removed }, 'rate limiter: forgot clients whose budget is full again');
        }, SWEEP_MS);
      },
      // Before authentication: a refused credential is charged like any request, so guessing the key is limited too.
      httpStage: 'limit',
      http(app) {
        // A callback hook: no promise per request on the hot path (every request passes here) unless exact.
        app.addHook('onRequest', (request, reply, done) => {
          const cost = request.routeOptions.config?.rateCost ?? defaultCost(request.method);
          const answer = (result: GcraResult) => (result.allowed ? done() : refuse(request, reply, cost, result.retryAfterMs));
          if (!exact()) return answer(local(request.ip, cost));
          stored.take(request.ip, cost, Date.now(), limits(ctx.config.rate_limit_per_second)).then(
            (result) => {
              degraded = false;
              answer(result);
            },
            (err: unknown) => {
              // The database did not answer: this node's share of the limit holds meanwhile (logged once per outage).
              if (!degraded) ctx.log.warn({ err }, "rate limiter: the database did not answer; limiting with this node's share");
              degraded = true;
              answer(local(request.ip, cost));
            },
          );
        });
      },
    };
  },
});

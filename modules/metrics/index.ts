import { defineModule, STAGE, type ModuleContext } from '@talon/module-sdk';
import type { Registry } from 'prom-client';
import { metricsRegistry } from './api.ts';
import { createMetrics } from './services/collectors.ts';

const registries = new WeakMap<ModuleContext, Registry>();

export default defineModule({
  register(ctx) {
    const metrics = createMetrics(ctx);
    registries.set(ctx, metrics.registry);
    ctx.provide(metricsRegistry, metrics.registry, (registry) => registry.clear());
    ctx.hooks.kernel.http.response.tap('metrics', (event) => metrics.observe(event), { stage: STAGE.OBSERVE });
  },
  routes(app, ctx) {
    app.get('/api/metrics', { schema: { summary: 'Metrics in the Prometheus text format', tags: ['system'] } }, async (_request, reply) => {
      const registry = registries.get(ctx);
      if (!registry) throw new Error('metrics registry missing');
      const text = await registry.metrics();
      return reply.type(registry.contentType).send(text);
    });
  },
});

import { defineModule, STAGE } from '@talon/module-sdk';
import { agentRegistry } from '@talon/agents';
import { Counter, Gauge } from 'prom-client';
import { metricsFactory, metricsRegistry } from '@talon/metrics';
import { createMetrics } from './services/collectors.ts';

export default defineModule({
  register(ctx) {
    // Each copy has its own registry (prom-client's global one would keep the previous copy's collectors).
    const metrics = createMetrics(ctx.kernel, () => ctx.tryUse(agentRegistry), ctx.nodes.id);
    ctx.provide(metricsRegistry, metrics.registry, (registry) => registry.clear());
    const registers = [metrics.registry];
    ctx.provide(metricsFactory, { counter: (config) => new Counter({ ...config, registers }), gauge: (config) => new Gauge({ ...config, registers }) });
    ctx.hooks.kernel.http.response.tap('metrics', (event) => metrics.observe(event), { stage: STAGE.OBSERVE });
    return {
      routes(app) {
        app.get(
          '/api/metrics',
          { schema: { summary: 'Metrics in the Prometheus text format', tags: ['system'] }, config: { quiet: true } },
          async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
        );
      },
    };
  },
});

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { HttpResponseEvent, KernelApi } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';

/** The module's registry with its own collectors; never prom-client's global one. */
export function createMetrics(kernel: KernelApi, agents: () => AgentRegistry | undefined): { registry: Registry; observe(event: HttpResponseEvent): void } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'talon_http_requests_total',
    help: 'HTTP requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'talon_http_request_duration_seconds',
    help: 'HTTP request durations by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  new Gauge({
    name: 'talon_modules',
    help: 'Modules by state',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const counts = new Map<string, number>();
      for (const m of kernel.modules()) counts.set(m.state, (counts.get(m.state) ?? 0) + 1);
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'talon_modules_loaded',
    help: 'Modules running',
    registers: [registry],
    collect() {
      this.set(kernel.modules().filter((m) => m.state === 'running').length);
    },
  });
  new Gauge({
    name: 'talon_agents_active',
    help: 'Agents in the registry (0 without the agents module)',
    registers: [registry],
    collect() {
      this.set(agents()?.list().length ?? 0);
    },
  });
  new Gauge({
    name: 'talon_uptime_seconds',
    help: 'Seconds since the kernel started',
    registers: [registry],
    collect() {
      this.set((Date.now() - kernel.startedAt.getTime()) / 1000);
    },
  });
  // The labelled children of each (method, route, status), so a request costs no label hashing. The route is the
  // pattern, never the raw URL: the set stays bounded by the routes.
  const children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  return {
    registry,
    observe(event) {
      const route = event.route ?? '(unmatched)';
      const key = `${event.method} ${event.statusCode} ${route}`;
      let child = children.get(key);
      if (!child) {
        const status = String(event.statusCode);
        child = { count: requests.labels(event.method, route, status), time: durations.labels(event.method, route, status) };
        children.set(key, child);
      }
      child.count.inc();
      child.time.observe(event.durationMs / 1000);
    },
  };
}

import { hostname } from 'node:os';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { HttpResponseEvent, KernelApi } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import { HttpDurations, HttpStats } from './http-stats.ts';

/**
 * A registry whose process defaults (CPU, memory, handles, event-loop delay, GC) start with its first read: their GC observer
 * and event-loop monitor cost every request and wake the process 100 times a second, for nobody while nobody scrapes.
 */
class ScrapedRegistry extends Registry {
  private defaultsStarted = false;

  private startDefaults(): void {
    if (this.defaultsStarted) return;
    this.defaultsStarted = true;
    collectDefaultMetrics({ register: this });
  }

  override metrics(): Promise<string> {
    this.startDefaults();
    return super.metrics();
  }

  override getMetricsAsJSON(): ReturnType<Registry['getMetricsAsJSON']> {
    this.startDefaults();
    return super.getMetricsAsJSON();
  }
}

/**
 * The module's registry with its own collectors; never prom-client's global one. Every series, other modules' too, is
 * rendered with a `node` label, this process's node id: nodes sharing a database (a fleet) report apart, and one label
 * keeps the cardinality low; the host and pid are told once, by talon_node_info.
 */
export function createMetrics(
  kernel: KernelApi,
  agents: () => AgentRegistry | undefined,
  node: string,
): { registry: Registry; observe(event: HttpResponseEvent): void } {
  const registry = new ScrapedRegistry();
  registry.setDefaultLabels({ node });
  new Gauge({
    name: 'talon_node_info',
    help: 'This node (1): its host and process id, joined to the other series by the node label',
    labelNames: ['host', 'pid'] as const,
    registers: [registry],
  }).set({ host: hostname(), pid: String(process.pid) }, 1);
  const stats = new HttpStats();
  new Counter({
    name: 'talon_http_requests_total',
    help: 'HTTP requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, count } of stats.values()) this.inc(labels, count);
    },
  });
  new HttpDurations(stats, registry);
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
  return { registry, observe: (event) => stats.observe(event) };
}

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { Counter, Histogram, Registry } from 'prom-client';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { metricsRegistry } from '../api.ts';
import { HttpDurations, HttpStats } from '../services/http-stats.ts';

let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['metrics', 'system', 'error-envelope'] });
});
after(() => k?.stop());

/** The samples of an exposition text: name, labels, value (label order is prom-client's, so compared as a map). */
function samples(text: string): Array<{ name: string; labels: Record<string, string>; value: string }> {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      assert.ok(m, `not a sample line: ${line}`);
      return { name: m[1], labels: Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, key, value]) => [key, value])), value: m[3] };
    });
}

/** The value of the series `name` with exactly these labels plus this node's `node` label; undefined without one. */
function valueOf(text: string, name: string, labels: Record<string, string> = {}): string | undefined {
  const want = { ...labels, node: k.kernel.nodes.id };
  return samples(text).find((s) => s.name === name && isDeepStrictEqual(s.labels, want))?.value;
}

async function scrape(): Promise<string> {
  const res = await k.request('/api/metrics');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return res.text();
}

test('the process defaults (their GC observer, event-loop monitor) start with the first scrape, not at start-up', async () => {
  const registry = k.kernel.services.view<Registry>(metricsRegistry.id);
  assert.equal(registry.getSingleMetric('nodejs_gc_duration_seconds'), undefined, 'nothing observes GC before anyone reads the metrics');
  assert.ok(valueOf(await scrape(), 'process_cpu_user_seconds_total'));
  assert.ok(registry.getSingleMetric('nodejs_gc_duration_seconds'));
});

test('requests are counted by method, route pattern and status, after they complete', async () => {
  assert.equal((await k.request('/api/health')).status, 200);
  assert.equal((await k.request('/api/nothing/here')).status, 404);
  const text = await scrape();
  const health = { method: 'GET', route: '/api/health', status: '200' };
  assert.equal(valueOf(text, 'talon_http_requests_total', health), '1');
  assert.equal(valueOf(text, 'talon_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' }), '1', 'raw URLs never become labels');
  assert.equal(valueOf(text, 'talon_http_request_duration_seconds_count', health), '1');
});

test('module, agent, uptime and process metrics', async () => {
  const text = await scrape();
  assert.equal(valueOf(text, 'talon_modules_loaded'), '3');
  assert.equal(valueOf(text, 'talon_modules', { state: 'running' }), '3');
  assert.equal(valueOf(text, 'talon_agents_active'), '0');
  for (const name of ['talon_uptime_seconds', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) assert.ok(Number(valueOf(text, name)) > 0, name);
});

test("every series carries this node's id as its node label, and talon_node_info names its host and pid", async () => {
  const text = await scrape();
  assert.equal(valueOf(text, 'talon_node_info', { host: hostname(), pid: String(process.pid) }), '1');
  const all = samples(text);
  assert.ok(all.length > 50, `${all.length} samples`);
  assert.deepEqual(
    all.filter((s) => s.labels.node !== k.kernel.nodes.id).map((s) => s.name),
    [],
    'series without this node as their node label',
  );
});

test('other modules can add metrics through the metrics.registry service', async () => {
  const registry = k.kernel.services.view<Registry>(metricsRegistry.id);
  const counter = new Counter({ name: 'probe_events_total', help: 'probe', registers: [registry] });
  counter.inc(3);
  // Another module's series is labelled as the module's own are.
  assert.equal(valueOf(await scrape(), 'probe_events_total'), '3');
});

test('a hot reload starts a fresh registry without duplicate-registration errors', async () => {
  const result = await k.kernel.reloadModule('metrics');
  assert.ok(result.ok, result.error);
  const text = await scrape();
  assert.equal(valueOf(text, 'talon_modules_loaded'), '3');
  assert.doesNotMatch(text, /probe_events_total/);
});

test('the duration histogram reads exactly as a prom-client Histogram given the same requests', async () => {
  const ours = new Registry();
  const stats = new HttpStats();
  new HttpDurations(stats, ours);
  const reference = new Registry();
  const histogram = new Histogram({
    name: 'talon_http_request_duration_seconds',
    help: 'HTTP request durations by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [reference],
  });
  const requests = [
    ['GET', '/api/health', 200, 0.7],
    ['GET', '/api/health', 200, 10],
    ['GET', '/api/health', 200, 1000],
    ['POST', '/api/agents/:id/message', 200, 2400],
    ['GET', undefined, 404, 45000],
    ['GET', '/api/health', 429, 0.01],
  ] as const;
  for (const [method, route, statusCode, durationMs] of requests) {
    stats.observe({ id: 'x', method, url: '/x', route, ip: '127.0.0.1', statusCode, durationMs, quiet: false });
    histogram.observe({ method, route: route ?? '(unmatched)', status: String(statusCode) }, durationMs / 1000);
  }
  assert.equal(await ours.metrics(), await reference.metrics());
  assert.deepEqual(await ours.getMetricsAsJSON(), await reference.getMetricsAsJSON());
});

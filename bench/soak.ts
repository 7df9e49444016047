/**
 * Soak (issue 23 item 8): a daemon run as `npm start` runs it, with every default module and the default log level,
 * under a steady open-loop load for a long time: health, the agent list, blocking and streamed messages to 4 agents,
 * session reads and a session reset now and then, against an instant fake provider. Every 10 s it samples the
 * server's RSS (/proc) and its heap and external memory (GET /api/health/detail); per minute it keeps p50/p99 latency. It reports the
 * growth after the first minute (goal < 10 % over 30 minutes), the trend of the later minutes and the worst minute's p99.
 *
 * Environment: SOAK_MINUTES (default 30), SOAK_RATE (requests per second, default 20), SOAK_SNAPSHOT_DIR (write heap
 * snapshots of the server there at the end of the first and of the last minute; each pauses the server for seconds).
 */
import http from 'node:http';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider } from '@talon/testing';
import { freePort, killTree, percentile, rssMb, spawnDetached, startScriptNodeArgs, waitHttp, waitForFile } from './util.ts';

const AGENTS = 4;
const SAMPLE_EVERY_MS = 10_000;
const MAX_IN_FLIGHT = 200;
const REQUEST_TIMEOUT_MS = 30_000;

type Kind = 'health' | 'list' | 'message' | 'stream' | 'session' | 'reset';
/** One cycle of 40 requests: the mix's proportions (a reset every 40 requests, so each session holds ~30 messages). */
const CYCLE: Kind[] = [
  ...Array<Kind>(8).fill('health'),
  ...Array<Kind>(6).fill('list'),
  ...Array<Kind>(8).fill('message'),
  ...Array<Kind>(8).fill('stream'),
  ...Array<Kind>(9).fill('session'),
  'reset',
];

interface Settings {
  minutes: number;
  rate: number;
  snapshotDir?: string;
}

function settings(): Settings {
  const minutes = Number(process.env.SOAK_MINUTES ?? 30);
  const rate = Number(process.env.SOAK_RATE ?? 20);
  if (!(minutes >= 2)) throw new Error('SOAK_MINUTES must be a number ≥ 2 (growth is measured after the first minute)');
  if (!(rate > 0)) throw new Error('SOAK_RATE must be a positive number');
  const snapshotDir = process.env.SOAK_SNAPSHOT_DIR ? path.resolve(process.env.SOAK_SNAPSHOT_DIR) : undefined;
  return { minutes, rate, snapshotDir };
}

const client = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request, its body read to the end (an SSE stream to its last event); status and the client's time in ms. */
function send(url: string, method: string, body?: unknown): Promise<{ status: number; ms: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
  return new Promise((resolve) => {
    const started = performance.now();
    const req = http.request(url, { method, agent: client, headers, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, ms: performance.now() - started, text: '' }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started, text: '' }));
    req.end(payload);
  });
}

/** The request for slot `n` of the run: the cycle's kind; the agents taken in turn, shifted by one each cycle so every kind reaches each. */
function request(base: string, agents: string[], n: number): { method: string; url: string; body?: unknown; ok: (text: string) => boolean } {
  const kind = CYCLE[n % CYCLE.length];
  const agent = `${base}/api/agents/${agents[(n + Math.floor(n / CYCLE.length)) % agents.length]}`;
  const any = () => true;
  switch (kind) {
    case 'health':
      return { method: 'GET', url: `${base}/api/health`, ok: any };
    case 'list':
      return { method: 'GET', url: `${base}/api/agents`, ok: any };
    case 'message':
      return { method: 'POST', url: `${agent}/message`, body: { message: `soak message ${n}` }, ok: any };
    case 'stream':
      return { method: 'POST', url: `${agent}/message/stream`, body: { message: `soak stream ${n}` }, ok: (t) => t.includes('event: done') };
    case 'session':
      return { method: 'GET', url: `${agent}/session`, ok: any };
    case 'reset':
      return { method: 'POST', url: `${agent}/session/reset`, body: {}, ok: any };
  }
}

/**
 * One sample of the server: memory in MB (RSS from /proc, the rest as GET /api/health/detail reports it), and from its
 * metrics the longest event-loop delay since the previous scrape (prom-client resets it) and its GC time so far.
 */
interface Sample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  loopDelayMaxMs: number;
  gcMs: number;
}

interface Minute {
  latencies: number[];
  failures: number;
  samples: Sample[];
}

const newMinute = (): Minute => ({ latencies: [], failures: 0, samples: [] });

/** The sum of a Prometheus text's samples of `name` (every label set), in ms from seconds. */
function metricMs(text: string, name: string): number {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1]) * 1000;
  return sum;
}

async function serverSample(base: string, pid: number): Promise<Sample> {
  const rss = rssMb(pid);
  const [health, metrics] = await Promise.all([send(`${base}/api/health/detail`, 'GET'), send(`${base}/api/metrics`, 'GET')]);
  const memory =
    health.status === 200
      ? (JSON.parse(health.text) as { memory: { heap_used: number; heap_total: number; external: number } }).memory
      : { heap_used: NaN, heap_total: NaN, external: NaN };
  return {
    rss,
    heapUsed: memory.heap_used / 2 ** 20,
    heapTotal: memory.heap_total / 2 ** 20,
    external: memory.external / 2 ** 20,
    loopDelayMaxMs: metrics.status === 200 ? metricMs(metrics.text, 'nodejs_eventloop_lag_max_seconds') : NaN,
    gcMs: metrics.status === 200 ? metricMs(metrics.text, 'nodejs_gc_duration_seconds_sum') : NaN,
  };
}

/** Writes a heap snapshot of the server (node --heapsnapshot-signal) and waits until the file is complete. */
async function snapshot(pid: number, dir: string, label: string, before: Set<string>): Promise<string> {
  process.kill(pid, 'SIGUSR2');
  const file = await waitForFile(dir, (f) => f.endsWith('.heapsnapshot') && !before.has(f), 180_000);
  before.add(path.basename(file));
  const named = path.join(dir, `${label}.heapsnapshot`);
  renameSync(file, named);
  return named;
}

async function startDaemon(fake: FakeProvider, home: string, snapshotDir?: string) {
  const port = await freePort();
  // The defaults a user runs with (every module, log level info), but no per-client rate limit in the way of the load.
  writeFileSync(
    path.join(home, 'config.toml'),
    `api_listen = "127.0.0.1:${port}"\nrate_limit_per_second = 100000\n[default_model]\nprovider = "openai"\nmodel = "fake-model"\nbase_url = "${fake.url}/v1"\napi_key_env = "SOAK_FAKE_KEY"\n`,
  );
  const diagnostics = snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : [];
  const child = spawnDetached(process.execPath, [...startScriptNodeArgs(), ...diagnostics, 'scripts/start.mjs'], { TALON_HOME: home, SOAK_FAKE_KEY: 'x' });
  const base = `http://127.0.0.1:${port}`;
  await waitHttp(`${base}/api/health`, 60_000, 50);
  return { child, base };
}

async function spawnAgents(base: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const res = await send(`${base}/api/agents`, 'POST', { manifest_toml: `name = "soak-${i}"\n[model]\nprovider = "openai"\nmodel = "fake-model"\n` });
    if (res.status !== 201) throw new Error(`spawn answered ${res.status}: ${res.text}`);
    ids.push((JSON.parse(res.text) as { agent_id: string }).agent_id);
  }
  return ids;
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return num / den;
}

const f1 = (n: number) => n.toFixed(1);

/** Every 10 s: a memory sample into the minute it closes; `onMinuteEnd(i)` after a minute's last sample. */
async function sample(base: string, pid: number, minutes: Minute[], startedAt: number, onMinuteEnd: (minute: number) => Promise<void>) {
  const perMinute = 60_000 / SAMPLE_EVERY_MS;
  for (let k = 1; k <= minutes.length * perMinute; k++) {
    const due = startedAt + k * SAMPLE_EVERY_MS;
    await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    const minute = minutes[Math.ceil(k / perMinute) - 1];
    minute.samples.push(await serverSample(base, pid));
    if (k % perMinute === 0) await onMinuteEnd(k / perMinute - 1);
  }
}

/** The open-loop load: request `n` is sent at start + n / rate whether or not the earlier ones were answered. */
async function drive(s: Settings, base: string, agents: string[], minutes: Minute[], startedAt: number) {
  const end = startedAt + s.minutes * 60_000;
  let inFlight = 0;
  let dropped = 0;
  const pending = new Set<Promise<void>>();
  for (let n = 0; ; n++) {
    const due = startedAt + (n * 1000) / s.rate;
    if (due >= end) break;
    await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    if (inFlight >= MAX_IN_FLIGHT) {
      dropped++;
      continue;
    }
    const r = request(base, agents, n);
    const minute = minutes[Math.min(minutes.length - 1, Math.floor((performance.now() - startedAt) / 60_000))];
    inFlight++;
    const p = send(r.url, r.method, r.body).then((res) => {
      inFlight--;
      minute.latencies.push(res.ms);
      if (res.status < 200 || res.status >= 300 || !r.ok(res.text)) minute.failures++;
    });
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }
  await Promise.all(pending);
  return dropped;
}

/** The minute's last sample. */
const closing = (m: Minute): Sample => m.samples[m.samples.length - 1];

/** A memory figure at the end of the first minute and of the run, and its trend (MB/min) over the later minutes. */
function growth(minutes: Minute[], of: (s: Sample) => number): { first: number; final: number; percent: number; perMinute: number } {
  const first = of(closing(minutes[0]));
  const final = of(closing(minutes[minutes.length - 1]));
  // Every sample after the first minute, at its time in minutes: one sample catches a heap between two collections.
  const later = minutes.slice(1).flatMap((m, i) => m.samples.map((x, j) => ({ at: i + 1 + (j + 1) / m.samples.length, value: of(x) })));
  const perMinute = slope(
    later.map((x) => x.at),
    later.map((x) => x.value),
  );
  return { first, final, percent: ((final - first) / first) * 100, perMinute };
}

function report(s: Settings, baseline: Sample, minutes: Minute[], dropped: number, snapshots: string[]) {
  const rss = growth(minutes, (x) => x.rss);
  const heapUsed = growth(minutes, (x) => x.heapUsed);
  const heapTotal = growth(minutes, (x) => x.heapTotal);
  const external = growth(minutes, (x) => x.external);
  const line = (g: ReturnType<typeof growth>) => `${f1(g.first)} → ${f1(g.final)} (${f1(g.percent)} %, ${g.perMinute.toFixed(2)} MB/min)`;
  const worst = minutes.map((m, i) => ({ p99: percentile(m.latencies, 99), minute: i + 1 })).reduce((w, m) => (m.p99 > w.p99 ? m : w));
  const all = minutes.flatMap((m) => m.latencies);
  const perMinute = minutes.map((m, i) => {
    const x = closing(m);
    const p = (q: number) => f1(percentile(m.latencies, q));
    const gcMs = x.gcMs - (i ? closing(minutes[i - 1]) : baseline).gcMs;
    const loop = Math.max(...m.samples.map((y) => y.loopDelayMaxMs));
    return `${i + 1}: rss ${f1(x.rss)} heap ${f1(x.heapUsed)}/${f1(x.heapTotal)} ext ${f1(x.external)} p50 ${p(50)} p99 ${p(99)} fail ${m.failures} loop max ${f1(loop)} gc ${f1(gcMs)}`;
  });
  return {
    'duration (min) / rate (req/s) / requests / failed / dropped (over 200 in flight)': `${s.minutes} / ${s.rate} / ${all.length} / ${minutes.reduce((a, m) => a + m.failures, 0)} / ${dropped}`,
    'RSS after the first minute → at the end (MB; growth, least-squares trend of minutes 2..end; goal < 10 % over 30 min)': line(rss),
    '  heap used': line(heapUsed),
    '  heap total': line(heapTotal),
    '  external (buffers, native objects V8 knows of)': line(external),
    "worst minute's p99 (ms) / minute": `${f1(worst.p99)} / ${worst.minute}`,
    'p50 / p99 over the whole run (ms)': `${f1(percentile(all, 50))} / ${f1(percentile(all, 99))}`,
    "per minute (MB at its end; ms; the server's longest event-loop delay and its GC time in the minute)": `\n    ${perMinute.join('\n    ')}`,
    ...(snapshots.length ? { 'heap snapshots (each pauses the server for seconds and raises its RSS)': snapshots.join(', ') } : {}),
  };
}

export async function soakBench() {
  const s = settings();
  const fake = new FakeProvider().setFallback({ text: 'pong from the soak provider', usage: { input: 12, output: 6 } });
  await fake.start();
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-soak-'));
  if (s.snapshotDir) mkdirSync(s.snapshotDir, { recursive: true });
  const { child, base } = await startDaemon(fake, home, s.snapshotDir);
  const snapshots: string[] = [];
  const seen = new Set<string>();
  try {
    const agents = await spawnAgents(base);
    const minutes = Array.from({ length: s.minutes }, newMinute);
    // Also resets the server's event-loop delay maximum, so the first minute's starts here.
    const baseline = await serverSample(base, child.pid!);
    const startedAt = performance.now();
    const onMinuteEnd = async (minute: number) => {
      // The provider keeps every request it saw; the soak needs none of them.
      fake.requests.splice(0);
      if (s.snapshotDir && (minute === 0 || minute === s.minutes - 1))
        snapshots.push(await snapshot(child.pid!, s.snapshotDir, minute === 0 ? 'first-minute' : 'last-minute', seen));
    };
    const [dropped] = await Promise.all([drive(s, base, agents, minutes, startedAt), sample(base, child.pid!, minutes, startedAt, onMinuteEnd)]);
    return report(s, baseline, minutes, dropped, snapshots);
  } finally {
    client.destroy();
    await killTree(child);
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

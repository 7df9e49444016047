/**
 * Kernel figures (issue 10, items 10 and 12), each a ratio against a bare Fastify hello server
 * (bench/bare-fastify.mjs) started the same way in the same run: `npm start` → first 200 from
 * /api/health, the server process's idle RSS, and GET /api/health throughput with every security
 * module on. Plus the hot reload latency of examples/hello-module.
 */
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { startTestKernel } from '@talon/testing';
import { freePort, killTree, median, rssMb, spawnDetached, waitHttp } from './util.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const IDLE_MS = 3_000;

type Side = 'talon' | 'bare';

interface Server {
  child: ChildProcess;
  url: string;
  /** The node process that serves (npm and its shell are its ancestors). */
  pid: number;
  dir?: string;
}

/** Both sides go through npm: `npm start` for Talon, `npm run bench:bare` for the baseline. */
async function launch(side: Side, config = ''): Promise<Server & { startMs: number }> {
  const port = await freePort();
  const dir = side === 'talon' ? mkdtempSync(path.join(tmpdir(), 'talon-bench-')) : undefined;
  if (dir) writeFileSync(path.join(dir, 'config.toml'), `api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\n${config}`);
  const url = `http://127.0.0.1:${port}/api/health`;
  const started = performance.now();
  const child =
    side === 'talon'
      ? spawnDetached('npm', ['start', '--silent'], { TALON_HOME: dir })
      : spawnDetached('npm', ['run', '--silent', 'bench:bare'], { BARE_PORT: String(port) });
  await waitHttp(url, 60_000, 2);
  const startMs = performance.now() - started;
  const pid = serverPid(child.pid!, side === 'talon' ? 'scripts/start.mjs' : 'bench/bare-fastify.mjs');
  return { child, url, pid, dir, startMs };
}

async function stop(server: Server): Promise<void> {
  await killTree(server.child);
  if (server.dir) rmSync(server.dir, { recursive: true, force: true });
}

/** The descendant of `root` whose command line names `script` (Linux /proc). */
function serverPid(root: number, script: string): number {
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (cmdline[0].endsWith('node') && cmdline.includes(script)) return pid;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (children) queue.push(...children.split(' ').map(Number));
    }
  }
  throw new Error(`no process running ${script} under ${root}`);
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

/**
 * Cold start to the first 200 and the RSS after IDLE_MS of idling, alternating the sides so that both
 * see the same machine. The first pair only warms the OS caches (and Talon's module bundle cache).
 */
async function startAndRss(runs: number): Promise<Record<Side, { ms: number[]; rss: number[] }>> {
  const out: Record<Side, { ms: number[]; rss: number[] }> = { talon: { ms: [], rss: [] }, bare: { ms: [], rss: [] } };
  for (let i = 0; i <= runs; i++) {
    const sides: Side[] = i % 2 ? ['bare', 'talon'] : ['talon', 'bare'];
    for (const side of sides) {
      const server = await launch(side);
      try {
        await new Promise((r) => setTimeout(r, IDLE_MS));
        if (i === 0) continue;
        out[side].ms.push(server.startMs);
        out[side].rss.push(rssMb(server.pid));
      } finally {
        await stop(server);
      }
    }
  }
  return out;
}

async function requests(url: string, seconds: number): Promise<number> {
  const result = await autocannon({ url, connections: 32, duration: seconds, pipelining: 1 });
  if (result.non2xx > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers`);
  return result.requests.total;
}

/** Both servers run side by side; rounds alternate which one is measured first. */
async function healthThroughput(rounds: number, seconds: number): Promise<{ talonRps: number; bareRps: number }> {
  // Every security module on (the defaults); a rate high enough that the limiter admits the benchmark's load.
  const talon = await launch('talon', 'rate_limit_per_second = 1000000\n');
  const bare = await launch('bare').catch(async (err) => {
    await stop(talon);
    throw err;
  });
  try {
    // Warm-up: both measured in steady state (JIT-compiled hot paths).
    await requests(talon.url, 3);
    await requests(bare.url, 3);
    const total = { talon: 0, bare: 0 };
    for (let i = 0; i < rounds; i++) {
      for (const side of i % 2 ? (['bare', 'talon'] as const) : (['talon', 'bare'] as const)) {
        total[side] += await requests(side === 'talon' ? talon.url : bare.url, seconds);
      }
    }
    return { talonRps: Math.round(total.talon / (rounds * seconds)), bareRps: Math.round(total.bare / (rounds * seconds)) };
  } finally {
    await stop(bare);
    await stop(talon);
  }
}

async function hotReload(runs: number): Promise<{ medianMs: number; runs: number[] }> {
  const root = mkdtempSync(path.join(tmpdir(), 'talon-bench-reload-'));
  const dir = path.join(root, 'hello');
  cpSync(path.join(ROOT, 'examples/hello-module'), dir, { recursive: true });
  const routeFile = path.join(dir, 'routes', 'hello.ts');
  const original = readFileSync(routeFile, 'utf8');
  const k = await startTestKernel({ dev: true, only: ['hello'], config: `module_paths = ["${root}"]\n` });
  const times: number[] = [];
  try {
    for (let i = 1; i <= runs; i++) {
      const marker = `v${i}`;
      const started = performance.now();
      writeFileSync(routeFile, original.replace('${ctx.config.greeting}, ', `\${ctx.config.greeting} ${marker}, `));
      for (const deadline = started + 30_000; ;) {
        const body = (await (await fetch(`${k.url}/api/hello/x`)).json()) as { message: string };
        if (body.message.includes(marker)) break;
        if (performance.now() > deadline) throw new Error(`reload ${i}: the changed route did not answer within 30 s`);
        await new Promise((r) => setTimeout(r, 2));
      }
      times.push(performance.now() - started);
      await k.kernel.settled();
    }
  } finally {
    await k.stop();
    rmSync(root, { recursive: true, force: true });
  }
  return { medianMs: Math.round(median(times)), runs: times.map(Math.round) };
}

export async function kernelBench() {
  const s = await startAndRss(7);
  const startMs = { talon: median(s.talon.ms), bare: median(s.bare.ms) };
  const rss = { talon: median(s.talon.rss), bare: median(s.bare.rss) };
  const health = await healthThroughput(3, 4);
  // A reload that never lands is reported as such, without losing the figures above.
  const reload = await hotReload(10).catch((err: Error) => ({ medianMs: `failed: ${err.message}` }));
  return {
    'cold start, npm start → first 200 /api/health (median ms)': Math.round(startMs.talon),
    'cold start, bare Fastify through npm (median ms)': Math.round(startMs.bare),
    'cold start ratio (target ≤ 2.0)': ratio(startMs.talon, startMs.bare),
    'cold start runs, Talon / bare (ms)': `${s.talon.ms.map(Math.round).join(' ')} / ${s.bare.ms.map(Math.round).join(' ')}`,
    [`idle RSS ${IDLE_MS / 1000} s after start (median MB), Talon / bare`]: `${round1(rss.talon)} / ${round1(rss.bare)}`,
    'idle RSS ratio (target ≤ 1.6)': ratio(rss.talon, rss.bare),
    'GET /api/health rps, every security module on / bare Fastify': `${health.talonRps} / ${health.bareRps}`,
    'rps ratio (target ≥ 0.6)': ratio(health.talonRps, health.bareRps),
    'hot reload hello-module, file change → new route answers (median ms, target ≤ 300)': reload.medianMs,
  };
}

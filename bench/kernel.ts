/**
 * Kernel figures: cold start of `npm start` to the first 200 from /api/health,
 * idle RSS, GET /api/health throughput against a bare Fastify server, and hot
 * reload latency of examples/hello-module.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startTestKernel } from '@talon/module-sdk/testing';
import { freePort, killTree, median, rssMb, spawnDetached, waitHttp } from './util.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function home(config: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-bench-'));
  writeFileSync(path.join(dir, 'config.toml'), config);
  return dir;
}

async function coldStart(runs: number): Promise<{ medianMs: number; runs: number[] }> {
  const times: number[] = [];
  for (let i = 0; i < runs + 1; i++) {
    const port = await freePort();
    const dir = home(`api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\n`);
    const started = performance.now();
    const child = spawnDetached('npm', ['start', '--silent'], { TALON_HOME: dir });
    await waitHttp(`http://127.0.0.1:${port}/api/health`, 30_000, 2);
    const ms = performance.now() - started;
    if (i > 0) times.push(ms); // the first run warms tsx's and the OS caches
    await killTree(child);
    rmSync(dir, { recursive: true, force: true });
  }
  return { medianMs: Math.round(median(times)), runs: times.map(Math.round) };
}

async function idleRss(): Promise<number> {
  const port = await freePort();
  const dir = home(`api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\n`);
  const child = spawnDetached(process.execPath, ['--import', 'tsx', 'kernel/main.ts'], { TALON_HOME: dir });
  await waitHttp(`http://127.0.0.1:${port}/api/health`, 30_000);
  await new Promise((r) => setTimeout(r, 3_000));
  const rss = rssMb(child.pid!);
  await killTree(child);
  rmSync(dir, { recursive: true, force: true });
  return Math.round(rss * 10) / 10;
}

async function rps(url: string, seconds: number): Promise<number> {
  const result = await autocannon({ url, connections: 32, duration: seconds, pipelining: 1 });
  if (result.non2xx > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers`);
  return Math.round(result.requests.average);
}

async function healthThroughput(seconds: number): Promise<{ talonRps: number; bareRps: number; ratio: number }> {
  const barePort = await freePort();
  const bare = spawnDetached(
    process.execPath,
    ['-e', `const f=require('fastify')();f.get('/api/health',async()=>({status:'ok'}));f.listen({port:${barePort},host:'127.0.0.1'})`],
    {},
  );
  const port = await freePort();
  // Every cross-cutting module on; a rate high enough that the limiter admits the benchmark's load.
  const dir = home(`api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\nrate_limit_per_second = 10000000\n`);
  const talon = spawnDetached(process.execPath, ['--import', 'tsx', 'kernel/main.ts'], { TALON_HOME: dir });
  try {
    await waitHttp(`http://127.0.0.1:${barePort}/api/health`, 30_000);
    await waitHttp(`http://127.0.0.1:${port}/api/health`, 30_000);
    // Warm-up: both servers are measured in steady state (JIT-compiled hot paths).
    await rps(`http://127.0.0.1:${port}/api/health`, 3);
    await rps(`http://127.0.0.1:${barePort}/api/health`, 3);
    const talonRps = await rps(`http://127.0.0.1:${port}/api/health`, seconds);
    const bareRps = await rps(`http://127.0.0.1:${barePort}/api/health`, seconds);
    return { talonRps, bareRps, ratio: Math.round((talonRps / bareRps) * 1000) / 1000 };
  } finally {
    await killTree(bare);
    await killTree(talon);
    rmSync(dir, { recursive: true, force: true });
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
      for (;;) {
        const body = (await (await fetch(`${k.url}/api/hello/x`)).json()) as { message: string };
        if (body.message.includes(marker)) break;
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
  const cold = await coldStart(7);
  const rss = await idleRss();
  const health = await healthThroughput(5);
  const reload = await hotReload(10);
  return {
    'cold start, npm start → first 200 /api/health (median ms, target ≤ 400)': cold.medianMs,
    'cold start runs (ms)': cold.runs.join(' '),
    'idle RSS after start (MB, target ≤ 80)': rss,
    'GET /api/health rps, all cross-cutting modules': health.talonRps,
    'GET /api/health rps, bare Fastify': health.bareRps,
    'ratio (target ≥ 0.60)': health.ratio,
    'hot reload hello-module, file change → new route answers (median ms, target ≤ 300)': reload.medianMs,
  };
}

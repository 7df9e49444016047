/**
 * Hot reload under load (issue 9 item 8): the whole service runs with `--dev` in its own process while
 * this process sends GET /api/health at a steady 200 requests per second. A module's route file is
 * changed again and again; for each change we measure the swap (file change → the new code answers)
 * and the health latencies in the 600 ms after the change, against the latencies with no reload: the
 * 3 s before the first change (after a 3 s warm-up that is not counted: a fresh process compiles its
 * hot paths then) and the gaps between the windows.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { freePort, killTree, median, percentile, spawnDetached, waitHttp } from './util.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const RATE = 200;
const WINDOW_MS = 600;
const WARM_UP_MS = 3_000;
const BASELINE_MS = 3_000;
/** Pause after each swap before the next change (the window is measured inside it). */
const GAP_MS = 1_000;

interface ModuleRow {
  id: string;
  last_reload?: { ms: number };
}

interface Sample {
  at: number;
  ms: number;
}

/**
 * Sends GET url at `rate` per second (open loop: a slow answer does not delay the next request) until stopped.
 * It runs in a worker thread: the main thread's own work (polling for the new code, writing files, its GC) must not
 * show up as service latency. Times are epoch milliseconds (performance.timeOrigin differs between threads).
 */
const PACED_LOAD = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, rate } = workerData;
const now = () => performance.timeOrigin + performance.now();
const samples = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const inflight = new Set();
const started = now();
let sent = 0;
const timer = setInterval(() => {
  const due = Math.floor(((now() - started) / 1000) * rate);
  for (; sent < due; sent++) {
    const at = now();
    const p = new Promise((resolve) => {
      http
        .get(url, { agent }, (res) => {
          res.resume();
          res.once('end', () => {
            samples.push({ at, ms: now() - at });
            resolve();
          });
        })
        .once('error', () => resolve());
    }).finally(() => inflight.delete(p));
    inflight.add(p);
  }
}, 2);
parentPort.once('message', async () => {
  clearInterval(timer);
  await Promise.allSettled(inflight);
  agent.destroy();
  parentPort.postMessage(samples);
});
`;

function pacedLoad(url: string, rate: number): { stop(): Promise<Sample[]>; terminate(): Promise<number> } {
  const worker = new Worker(PACED_LOAD, { eval: true, workerData: { url, rate } });
  return {
    async stop() {
      const done = new Promise<Sample[]>((resolve) => worker.once('message', resolve));
      worker.postMessage('stop');
      return done;
    },
    terminate: () => worker.terminate(),
  };
}

const now = () => performance.timeOrigin + performance.now();

export async function reloadBench() {
  const modules = mkdtempSync(path.join(tmpdir(), 'talon-bench-reload-'));
  const dir = path.join(modules, 'hello');
  cpSync(path.join(ROOT, 'examples/hello-module'), dir, { recursive: true });
  const routeFile = path.join(dir, 'routes', 'hello.ts');
  const original = readFileSync(routeFile, 'utf8');
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-home-'));
  const port = await freePort();
  writeFileSync(
    path.join(home, 'config.toml'),
    `api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\nrate_limit_per_second = 100000\nmodule_paths = ["${modules}"]\n`,
  );
  const service = spawnDetached(process.execPath, ['--import', 'tsx', 'bin/talon.ts', '--dev'], { TALON_HOME: home });
  const base = `http://127.0.0.1:${port}`;
  const swaps: number[] = [];
  const changes: number[] = [];
  const serverMs: number[] = [];
  let load: ReturnType<typeof pacedLoad> | undefined;
  try {
    await waitHttp(`${base}/api/health`, 60_000);
    await waitHttp(`${base}/api/hello/x`, 10_000);
    load = pacedLoad(`${base}/api/health`, RATE);
    await new Promise((r) => setTimeout(r, WARM_UP_MS + BASELINE_MS));
    const baselineFrom = now() - BASELINE_MS;
    for (let i = 1; i <= 15; i++) {
      const marker = `v${i}`;
      const at = now();
      changes.push(at);
      writeFileSync(routeFile, original.replace('${ctx.config.greeting}, ', `\${ctx.config.greeting} ${marker}, `));
      for (;;) {
        const body = (await (await fetch(`${base}/api/hello/x`)).json()) as { message: string };
        if (body.message.includes(marker)) break;
        if (now() - at > 30_000) throw new Error(`change ${i} was not served within 30 s`);
        await new Promise((r) => setTimeout(r, 2));
      }
      swaps.push(now() - at);
      await new Promise((r) => setTimeout(r, GAP_MS));
      const hello = ((await (await fetch(`${base}/api/modules`)).json()) as { modules: ModuleRow[] }).modules.find((m) => m.id === 'hello');
      serverMs.push(hello?.last_reload?.ms ?? NaN);
    }
    const end = now();
    const samples = await load.stop();
    const inWindow = (s: Sample) => changes.some((c) => s.at >= c && s.at < c + WINDOW_MS);
    const during = samples.filter(inWindow).map((s) => s.ms);
    const before = samples.filter((s) => s.at >= baselineFrom && s.at < changes[0]).map((s) => s.ms);
    const between = samples.filter((s) => s.at >= changes[0] && s.at < end && !inWindow(s)).map((s) => s.ms);
    const round = (v: number) => Math.round(v * 10) / 10;
    return {
      'swap, file change → new code answering (median ms, target ≤ 100)': Math.round(median(swaps)),
      'swap runs (ms)': swaps.map(Math.round).join(' '),
      'reload inside the service, change seen → swapped (median ms)': Math.round(median(serverMs)),
      'GET /api/health p99 in the 600 ms after each change (ms, target ≤ 20)': round(percentile(during, 99)),
      'GET /api/health p50 / max in those windows (ms)': `${round(median(during))} / ${round(Math.max(...during))}`,
      'GET /api/health p99 without reloads: before the first / between the windows (ms)': `${round(percentile(before, 99))} / ${round(percentile(between, 99))}`,
      'requests measured (during / before / between)': `${during.length} / ${before.length} / ${between.length}`,
    };
  } finally {
    await load?.terminate();
    await killTree(service);
    rmSync(home, { recursive: true, force: true });
    rmSync(modules, { recursive: true, force: true });
  }
}

/**
 * Hot reload under load (issue 9 item 8): the whole service runs with `--dev` in its own process while
 * this process sends GET /api/health at a steady 200 requests per second. A module's route file is
 * changed again and again; for each change we measure the swap (file change → the new code answers)
 * and the health latencies in the 600 ms after the change, against the latencies with no reload.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { freePort, killTree, median, percentile, spawnDetached, waitHttp } from './util.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const RATE = 200;
const WINDOW_MS = 600;

interface Sample {
  at: number;
  ms: number;
}

/** Sends GET url at `rate` per second (open loop: a slow answer does not delay the next request) until stopped. */
function pacedLoad(url: string, rate: number): { samples: Sample[]; stop(): Promise<void> } {
  const samples: Sample[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const inflight = new Set<Promise<void>>();
  const started = performance.now();
  let sent = 0;
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    for (; sent < due; sent++) {
      const at = performance.now();
      const p = new Promise<void>((resolve) => {
        http
          .get(url, { agent }, (res) => {
            res.resume();
            res.once('end', () => {
              samples.push({ at, ms: performance.now() - at });
              resolve();
            });
          })
          .once('error', () => resolve());
      }).finally(() => inflight.delete(p));
      inflight.add(p);
    }
  }, 2);
  return {
    samples,
    async stop() {
      clearInterval(timer);
      await Promise.allSettled(inflight);
      agent.destroy();
    },
  };
}

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
  const service = spawnDetached(process.execPath, ['--import', 'tsx', 'kernel/main.ts', '--dev'], { TALON_HOME: home });
  const base = `http://127.0.0.1:${port}`;
  const swaps: number[] = [];
  const changes: number[] = [];
  try {
    await waitHttp(`${base}/api/health`, 60_000);
    await waitHttp(`${base}/api/hello/x`, 10_000);
    const load = pacedLoad(`${base}/api/health`, RATE);
    await new Promise((r) => setTimeout(r, 3_000)); // steady state, and a baseline without reloads
    for (let i = 1; i <= 15; i++) {
      const marker = `v${i}`;
      const at = performance.now();
      changes.push(at);
      writeFileSync(routeFile, original.replace('${ctx.config.greeting}, ', `\${ctx.config.greeting} ${marker}, `));
      for (;;) {
        const body = (await (await fetch(`${base}/api/hello/x`)).json()) as { message: string };
        if (body.message.includes(marker)) break;
        await new Promise((r) => setTimeout(r, 2));
      }
      swaps.push(performance.now() - at);
      await new Promise((r) => setTimeout(r, 1_000));
    }
    await load.stop();
    const during = load.samples.filter((s) => changes.some((c) => s.at >= c && s.at < c + WINDOW_MS)).map((s) => s.ms);
    const quiet = load.samples.filter((s) => s.at < changes[0] - 500).map((s) => s.ms);
    const round = (v: number) => Math.round(v * 10) / 10;
    return {
      'swap, file change → new code answering (median ms, target ≤ 100)': Math.round(median(swaps)),
      'swap runs (ms)': swaps.map(Math.round).join(' '),
      'GET /api/health p99 in the 600 ms after each change (ms, target ≤ 20)': round(percentile(during, 99)),
      'GET /api/health p50 / max in those windows (ms)': `${round(median(during))} / ${round(Math.max(...during))}`,
      'GET /api/health p99 without reloads (ms)': round(percentile(quiet, 99)),
      'requests measured (during / without)': `${during.length} / ${quiet.length}`,
    };
  } finally {
    await killTree(service);
    rmSync(home, { recursive: true, force: true });
    rmSync(modules, { recursive: true, force: true });
  }
}

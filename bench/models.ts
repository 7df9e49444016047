/** GET /api/models with the full catalogue, from a separate process: p50 and p99 (target p99 ≤ 5 ms). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, killTree, percentile, spawnDetached, waitHttp } from './util.ts';

export async function modelsBench() {
  const port = await freePort();
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-models-'));
  writeFileSync(path.join(home, 'config.toml'), `api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\nrate_limit_per_second = 1000000\n`);
  const daemon = spawnDetached(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], { TALON_HOME: home });
  const url = `http://127.0.0.1:${port}/api/models`;
  try {
    await waitHttp(url, 30_000);
    const first = (await (await fetch(url)).json()) as { total: number };
    const times: number[] = [];
    for (let i = 0; i < 1100; i++) {
      const t = performance.now();
      await (await fetch(url)).arrayBuffer();
      if (i >= 100) times.push(performance.now() - t);
    }
    return {
      'models in the catalogue': first.total,
      'GET /api/models p50 ms': percentile(times, 50).toFixed(2),
      'GET /api/models p99 ms (target ≤ 5)': percentile(times, 99).toFixed(2),
    };
  } finally {
    await killTree(daemon);
    rmSync(home, { recursive: true, force: true });
  }
}

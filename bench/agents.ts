/**
 * Agents figures against a daemon process and an instant fake provider:
 * blocking-message overhead over the provider's own time, 1,000 spawns,
 * GET /api/agents latency with 1,000 agents, 100 concurrent SSE turns, and
 * idle RSS with 1,000 agents.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider } from '@talon/module-sdk/testing';
import { freePort, killTree, percentile, rssMb, spawnDetached, waitHttp } from './util.ts';

const manifest = (name: string) => `name = "${name}"\n[model]\nprovider = "openai"\nmodel = "fake-model"\n`;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const value = await fn();
  return [value, performance.now() - t];
}

export async function agentsBench() {
  const fake = new FakeProvider().setFallback({ text: 'pong', usage: { input: 3, output: 1 } });
  await fake.start();
  const port = await freePort();
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-agents-'));
  writeFileSync(
    path.join(home, 'config.toml'),
    `api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\nrate_limit_per_second = 10000000\n[default_model]\nprovider = "openai"\nmodel = "fake-model"\nbase_url = "${fake.url}/v1"\napi_key_env = "BENCH_FAKE_KEY"\n`,
  );
  const daemon = spawnDetached(process.execPath, ['--import', 'tsx', 'kernel/main.ts'], { TALON_HOME: home, BENCH_FAKE_KEY: 'x' });
  const url = `http://127.0.0.1:${port}`;
  const post = (p: string, body: unknown) => fetch(url + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  try {
    await waitHttp(`${url}/api/health`, 30_000);
    const first = (await (await post('/api/agents', { manifest_toml: manifest('bench-0') })).json()) as { agent_id: string };

    // 1,000 spawns.
    const spawnStart = performance.now();
    const batch = 25;
    for (let i = 1; i < 1000; i += batch) {
      await Promise.all(
        Array.from({ length: Math.min(batch, 1000 - i) }, (_, j) =>
          post('/api/agents', { manifest_toml: manifest(`bench-${i + j}`) }).then((r) => {
            if (r.status !== 201) throw new Error(`spawn answered ${r.status}`);
            return r.arrayBuffer();
          }),
        ),
      );
    }
    const spawnMs = performance.now() - spawnStart;

    // Idle: the agents exist, nothing runs.
    await new Promise((r) => setTimeout(r, 3_000));
    const rss = rssMb(daemon.pid!);

    // Blocking message overhead: the client's time minus the provider's own time for that request (the fake
    // provider times each request from its first byte in to its last byte out). A fresh session every 20 turns.
    const overhead: number[] = [];
    for (let i = 0; i < 320; i++) {
      if (i % 20 === 0) await (await post(`/api/agents/${first.agent_id}/session/reset`, {})).arrayBuffer();
      const [res, t] = await timed(async () => {
        const r = await post(`/api/agents/${first.agent_id}/message`, { message: 'ping' });
        await r.arrayBuffer();
        return r;
      });
      if (res.status !== 200) throw new Error(`message answered ${res.status}`);
      if (i >= 20) overhead.push(t - (fake.requests[fake.requests.length - 1].ms ?? 0));
    }

    const list: number[] = [];
    for (let i = 0; i < 200; i++) {
      const [, t] = await timed(async () => (await fetch(`${url}/api/agents`)).arrayBuffer());
      if (i >= 20) list.push(t);
    }

    // 100 concurrent SSE turns, each on its own agent.
    const agents = ((await (await fetch(`${url}/api/agents`)).json()) as Array<{ id: string }>).slice(0, 100);
    const sse = await Promise.all(
      agents.map(async (a) => {
        const r = await post(`/api/agents/${a.id}/message/stream`, { message: 'ping' });
        const text = await r.text();
        return r.status === 200 && text.includes('event: done');
      }),
    );

    return {
      'blocking message overhead over the provider (p50 ms, target ≤ 3)': percentile(overhead, 50).toFixed(2),
      'blocking message overhead p90 (ms)': percentile(overhead, 90).toFixed(2),
      '1,000 agents spawned (s, target ≤ 5)': (spawnMs / 1000).toFixed(2),
      'GET /api/agents with 1,000 agents (p99 ms, target ≤ 5)': percentile(list, 99).toFixed(2),
      'GET /api/agents with 1,000 agents (p50 ms)': percentile(list, 50).toFixed(2),
      '100 concurrent SSE turns completed': `${sse.filter(Boolean).length}/100`,
      'idle RSS with 1,000 agents (MB, target ≤ 150)': rss.toFixed(1),
    };
  } finally {
    await killTree(daemon);
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

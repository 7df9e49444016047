/**
 * Agents figures (issue 10 items 11 and 13) against a daemon process and an instant fake provider, each beside a bare
 * Fastify server started the same way in the same run (bench/bare-agents.mjs), measured in alternating rounds so load
 * on the machine hits both alike:
 * - blocking message: the client's time minus the provider's own time for that request (the fake provider times each
 *   request from its first byte in to its last byte out), p50/p90/p99, split into the part before the provider call
 *   and the part after its answer; next to a bare relay that makes the same streamed provider call (the floor of any
 *   service in front of a provider);
 * - GET /api/agents with 1,000 agents: the server's own time p50/p99 (the access log's ms, taken at log level info in
 *   rounds of their own), and the client's, next to the bare server answering the same bytes;
 * - 1,000 spawns, 100 concurrent SSE turns, idle RSS with 1,000 agents.
 * One keep-alive connection times the requests (node:http, as a client library would), so the figures are the
 * servers', not fetch's.
 */
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, type RecordedRequest } from '@talon/testing';
import { cpuMs, freePort, killTree, percentile, rssMb, spawnDetached, waitHttp } from './util.ts';

const manifest = (name: string) => `name = "${name}"\n[model]\nprovider = "openai"\nmodel = "fake-model"\n`;
const ROUNDS = 4;
const TURNS_PER_ROUND = 100;
const LISTS_PER_ROUND = 100;

const client = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request on the timing connection: status, body and the client's time in ms. */
function call(url: string, method = 'GET', body?: unknown): Promise<{ status: number; text: string; ms: number }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
    const req = http.request(url, { method, agent: client, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        // Timed at the last byte: joining and decoding the body is the client's own work.
        const ms = performance.now() - started;
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), ms });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

interface Overheads {
  total: number[];
  before: number[];
  after: number[];
}

/** `n` blocking messages; each one's time minus the provider's, and the parts before and after the provider. */
async function messages(fake: FakeProvider, url: string, n: number, out: Overheads, reset?: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < n; i++) {
    if (reset && i % 20 === 0) await reset();
    const seen = fake.requests.length;
    const started = performance.now();
    const res = await call(url, 'POST', { message: 'ping' });
    const ended = performance.now();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${res.text}`);
    const sent: RecordedRequest | undefined = fake.requests[seen];
    if (!sent?.startedAt || !sent.finishedAt || fake.requests.length !== seen + 1) throw new Error('expected exactly one provider call per message');
    out.total.push(res.ms - (sent.finishedAt - sent.startedAt));
    out.before.push(sent.startedAt - started);
    out.after.push(ended - sent.finishedAt);
  }
}

async function lists(url: string, n: number, out: number[]): Promise<number> {
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const res = await call(url);
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    bytes = Buffer.byteLength(res.text);
    out.push(res.ms);
  }
  return bytes;
}

/**
 * The `ms` of the access log lines (the logs module's daily file in `home`) of `count` `method url` requests since `since`
 * (epoch ms): Fastify's time from the request's arrival to its last byte handed to the socket.
 */
async function accessLogMs(home: string, method: string, url: string, since: number, count: number): Promise<number[]> {
  const dir = path.join(home, 'logs');
  for (const deadline = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 100))) {
    const ms = readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n'))
      .filter((line) => line.includes('"request completed"'))
      .map((line) => JSON.parse(line) as { time: string; method: string; url: string; ms: number })
      .filter((l) => l.method === method && l.url === url && Date.parse(l.time) >= since)
      .map((l) => l.ms);
    if (ms.length >= count) return ms;
    if (Date.now() > deadline) throw new Error(`${count} access log lines of ${method} ${url} expected in ${dir}, found ${ms.length}`);
  }
}

const f2 = (n: number) => n.toFixed(2);
const pcts = (v: number[]) => `${f2(percentile(v, 50))} / ${f2(percentile(v, 90))} / ${f2(percentile(v, 99))}`;

export async function agentsBench() {
  const fake = new FakeProvider().setFallback({ text: 'pong', usage: { input: 3, output: 1 } });
  await fake.start();
  const [port, barePort] = [await freePort(), await freePort()];
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-agents-'));
  writeFileSync(
    path.join(home, 'config.toml'),
    `api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\nrate_limit_per_second = 1000000\n[default_model]\nprovider = "openai"\nmodel = "fake-model"\nbase_url = "${fake.url}/v1"\napi_key_env = "BENCH_FAKE_KEY"\n`,
  );
  // As `npm start` runs it: the kernel's CommonJS build, no TypeScript loader.
  const daemon = spawnDetached(process.execPath, ['scripts/start.mjs'], { TALON_HOME: home, BENCH_FAKE_KEY: 'x' });
  let bare: ReturnType<typeof spawnDetached> | undefined;
  const url = `http://127.0.0.1:${port}`;
  const bareUrl = `http://127.0.0.1:${barePort}`;
  const post = (p: string, body: unknown) => fetch(url + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  try {
    await waitHttp(`${url}/api/health`, 60_000);
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

    // The bare server answers the very bytes of the agent list.
    const listFile = path.join(home, 'agents.json');
    writeFileSync(listFile, (await call(`${url}/api/agents`)).text);
    bare = spawnDetached(process.execPath, ['bench/bare-agents.mjs'], { BARE_PORT: String(barePort), PROVIDER_URL: fake.url, LIST_FILE: listFile });
    await waitHttp(`${bareUrl}/list`, 30_000);

    const talon: Overheads = { total: [], before: [], after: [] };
    const relay: Overheads = { total: [], before: [], after: [] };
    const cpu = { talon: 0, bare: 0 };
    const talonList: number[] = [];
    const bareList: number[] = [];
    let listBytes = 0;
    const message = `${url}/api/agents/${first.agent_id}/message`;
    // A fresh session every 20 turns, so the history sent stays small.
    const reset = () => call(`${url}/api/agents/${first.agent_id}/session/reset`, 'POST', {});
    // Warm-up (JIT, prepared statements, keep-alive connections), then alternating rounds.
    await messages(fake, message, 40, { total: [], before: [], after: [] }, reset);
    await messages(fake, `${bareUrl}/message`, 40, { total: [], before: [], after: [] });
    await lists(`${url}/api/agents`, 20, []);
    await lists(`${bareUrl}/list`, 20, []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? ['talon', 'bare'] : ['bare', 'talon']) {
        if (side === 'talon') {
          const before = cpuMs(daemon.pid!);
          await messages(fake, message, TURNS_PER_ROUND, talon, reset);
          cpu.talon += cpuMs(daemon.pid!) - before;
        } else {
          const before = cpuMs(bare!.pid!);
          await messages(fake, `${bareUrl}/message`, TURNS_PER_ROUND, relay);
          cpu.bare += cpuMs(bare!.pid!) - before;
        }
      }
    }
    // The lists at log level info: the access log's line of each (the logs module's file) holds the server's own time.
    await post('/api/config/set', { path: 'log_level', value: 'info' }).then((r) => r.arrayBuffer());
    const listsFrom = Date.now();
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? ['talon', 'bare'] : ['bare', 'talon']) {
        if (side === 'talon') listBytes = await lists(`${url}/api/agents`, LISTS_PER_ROUND, talonList);
        else await lists(`${bareUrl}/list`, LISTS_PER_ROUND, bareList);
      }
    }
    const talonListServer = await accessLogMs(home, 'GET', '/api/agents', listsFrom, ROUNDS * LISTS_PER_ROUND);

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
      'blocking message overhead over the provider, p50 / p90 / p99 (ms; targets p50 ≤ 3, p99 ≤ 8)': pcts(talon.total),
      '  of it before the provider call / after its answer (p50 ms)': `${f2(percentile(talon.before, 50))} / ${f2(percentile(talon.after, 50))}`,
      '  bare Fastify relay making the same provider call, p50 / p90 / p99 (ms)': pcts(relay.total),
      '  server CPU per message, Talon / bare relay (ms; includes work after the answer, less sensitive to load)': `${f2(cpu.talon / (ROUNDS * TURNS_PER_ROUND))} / ${f2(cpu.bare / (ROUNDS * TURNS_PER_ROUND))}`,
      'GET /api/agents with 1,000 agents, server time (access log ms), p50 / p99 (ms; target p99 ≤ 2)': `${f2(percentile(talonListServer, 50))} / ${f2(percentile(talonListServer, 99))}`,
      '  as the client times it, p50 / p99 (ms; target p99 ≤ 5)': `${f2(percentile(talonList, 50))} / ${f2(percentile(talonList, 99))}`,
      '  bare Fastify answering the same bytes, p50 / p99 (ms)': `${f2(percentile(bareList, 50))} / ${f2(percentile(bareList, 99))}`,
      '  body (KB)': (listBytes / 1024).toFixed(0),
      '1,000 agents spawned (s, target ≤ 5)': (spawnMs / 1000).toFixed(2),
      '100 concurrent SSE turns completed': `${sse.filter(Boolean).length}/100`,
      'idle RSS with 1,000 agents (MB, target ≤ 150)': rss.toFixed(1),
    };
  } finally {
    client.destroy();
    if (bare) await killTree(bare);
    await killTree(daemon);
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

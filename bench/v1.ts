/**
 * Overhead of the chat-completions-compatible API over an instant fake model:
 * - non-streaming: p50 of POST /v1/chat/completions minus p50 of the same call
 *   made straight to the provider (target ≤ 3 ms);
 * - streaming: time to the first body byte through /v1 minus the provider's
 *   own time to its first byte (target ≤ 3 ms, issue 10 item 11).
 * Each timed turn runs in a fresh session, so the history sent stays the same size.
 */
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { startTestKernel } from '@talon/testing';
import { FakeProvider } from '@talon/testing';
import { agentRunner, sessionStore, type AgentRunner, type SessionStore } from '../modules/agents/api.ts';

export interface V1BenchFigures {
  iterations: number;
  provider_p50_ms: number;
  v1_p50_ms: number;
  /** v1_p50_ms − provider_p50_ms; target ≤ 3. */
  overhead_p50_ms: number;
  v1_p95_ms: number;
  provider_first_byte_p50_ms: number;
  v1_first_byte_p50_ms: number;
  /** v1 first byte − provider first byte; target ≤ 3. */
  first_byte_overhead_p50_ms: number;
  targets_met: boolean;
  /** Breakdown: the same turn through agentRunner.run in-process (agents + llm + driver, no HTTP). */
  runner_p50_ms: number;
  /** In-process time to the turn's first text_delta. */
  runner_first_delta_p50_ms: number;
  /** One loopback HTTP round trip to the service (GET /api/health). */
  http_roundtrip_p50_ms: number;
  /** What the openai-compat layer itself adds: v1 − runner − HTTP round trip. */
  adapter_p50_ms: number;
  /** v1 first byte − runner first delta − HTTP round trip. */
  adapter_first_byte_p50_ms: number;
}

const KEY_ENV = 'TALON_BENCH_V1_KEY';
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One POST; resolves with the time to the first body byte and to the end, in ms. */
function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    http.get(url, { agent }, (res) => res.resume().on('end', () => resolve(performance.now() - started))).on('error', reject);
  });
}

function post(url: string, body: unknown): Promise<{ firstByte: number; total: number; status: number }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByte = 0;
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), authorization: 'Bearer x' } },
      (res) => {
        res.on('data', () => {
          if (!firstByte) firstByte = performance.now() - started;
        });
        res.on('end', () => resolve({ firstByte, total: performance.now() - started, status: res.statusCode ?? 0 }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const round = (n: number) => Math.round(n * 1000) / 1000;

export async function benchV1(options: { iterations?: number } = {}): Promise<V1BenchFigures> {
  const iterations = options.iterations ?? 300;
  process.env[KEY_ENV] = 'sk-bench';
  const fake = new FakeProvider().setFallback({ text: 'ok', usage: { input: 10, output: 2 } });
  await fake.start();
  const kernel = await startTestKernel({
    only: ['openai-compat', 'usage', 'agents', 'catalog', 'llm', 'llm-openai', 'error-envelope'],
    config: `[default_model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\nbase_url = "${fake.url}/v1"\napi_key_env = "${KEY_ENV}"\n`,
  });
  try {
    const spawn = await kernel.request('/api/agents', {
      method: 'POST',
      json: { manifest_toml: 'name = "bench"\n\n[model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n' },
    });
    const { agent_id: agentId } = (await spawn.json()) as { agent_id: string };
    const sessions = kernel.kernel.services.view<SessionStore>(sessionStore.id);
    const messages = [{ role: 'user', content: 'hi' }];
    const direct = (stream: boolean) =>
      post(`${fake.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
    const viaV1 = async (stream: boolean) => {
      await sessions.newSession(agentId);
      return post(`${kernel.url}/v1/chat/completions`, { model: 'svc:bench', messages, stream });
    };
    const measure = async (fn: () => Promise<{ firstByte: number; total: number; status: number }>) => {
      const out: Array<{ firstByte: number; total: number }> = [];
      for (let i = 0; i < iterations; i++) {
        const r = await fn();
        if (r.status !== 200) throw new Error(`status ${r.status}`);
        out.push(r);
      }
      return out;
    };
    // Warm up both paths (JIT, ajv compilation, prepared statements, keep-alive sockets).
    for (let i = 0; i < 200; i++)
      await Promise.all([direct(false), direct(true)])
        .then(() => viaV1(false))
        .then(() => viaV1(true));
    const providerPlain = await measure(() => direct(false));
    const v1Plain = await measure(() => viaV1(false));
    const providerStream = await measure(() => direct(true));
    const v1Stream = await measure(() => viaV1(true));
    const runner = kernel.kernel.services.view<AgentRunner>(agentRunner.id);
    const inProcess = await measure(async () => {
      await sessions.newSession(agentId);
      const started = performance.now();
      let firstByte = 0;
      await runner.run({ agentId, message: 'hi' }, (event) => {
        if (event.type === 'text_delta' && !firstByte) firstByte = performance.now() - started;
      });
      return { firstByte, total: performance.now() - started, status: 200 };
    });
    const health: number[] = [];
    for (let i = 0; i < iterations; i++) health.push(await get(`${kernel.url}/api/health`));
    const runnerP50 = percentile(
      inProcess.map((r) => r.total),
      50,
    );
    const runnerFirst = percentile(
      inProcess.map((r) => r.firstByte),
      50,
    );
    const httpP50 = percentile(health, 50);
    const providerP50 = percentile(
      providerPlain.map((r) => r.total),
      50,
    );
    const v1P50 = percentile(
      v1Plain.map((r) => r.total),
      50,
    );
    const providerFirst = percentile(
      providerStream.map((r) => r.firstByte),
      50,
    );
    const v1First = percentile(
      v1Stream.map((r) => r.firstByte),
      50,
    );
    const overhead = v1P50 - providerP50;
    const firstOverhead = v1First - providerFirst;
    return {
      iterations,
      provider_p50_ms: round(providerP50),
      v1_p50_ms: round(v1P50),
      overhead_p50_ms: round(overhead),
      v1_p95_ms: round(
        percentile(
          v1Plain.map((r) => r.total),
          95,
        ),
      ),
      provider_first_byte_p50_ms: round(providerFirst),
      v1_first_byte_p50_ms: round(v1First),
      first_byte_overhead_p50_ms: round(firstOverhead),
      targets_met: overhead <= 3 && firstOverhead <= 3,
      runner_p50_ms: round(runnerP50),
      runner_first_delta_p50_ms: round(runnerFirst),
      http_roundtrip_p50_ms: round(httpP50),
      adapter_p50_ms: round(v1P50 - runnerP50 - httpP50),
      adapter_first_byte_p50_ms: round(v1First - runnerFirst - httpP50),
    };
  } finally {
    agent.destroy();
    await kernel.stop();
    await fake.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  benchV1().then((figures) => console.log(JSON.stringify(figures, null, 2)));
}

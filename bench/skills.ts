/**
 * Skills figures, in process: GET /api/skills with 1,000 installed skills (p99), install with scan of a typical
 * skill, scanner throughput, the overhead of a WASM tool call (the example skill on a tiny input), and the
 * skill section of the system prompt for an agent with 20 skills (cold: built; warm: cached).
 */
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel } from '@talon/testing';
import type { AgentRecord, ModelCallContext } from '@talon/agents';
import type { PromptScanner } from '@talon/prompt-guard';
import type { WasmRuntime } from '@talon/wasm';
import { percentile } from './util.ts';

const BODY = `# Helper\n\n${'Explain the steps clearly, check the inputs, cite the sources and keep answers short. '.repeat(40)}\n`;
const skillMd = (name: string) =>
  `---\nname: ${name}\ndescription: ${name} does useful things\nversion: 1.0.0\nauthor: bench\ntags: [bench, cat${name.length % 7}]\n---\n${BODY}`;

function writeSkills(root: string, count: number, prefix: string): void {
  for (let i = 0; i < count; i++) {
    const dir = path.join(root, `${prefix}${i}`);
    mkdirSync(path.join(dir, 'references'), { recursive: true });
    writeFileSync(path.join(dir, 'SKILL.md'), skillMd(`${prefix}${i}`));
    writeFileSync(path.join(dir, 'references', 'notes.md'), BODY);
  }
}

async function time<T>(fn: () => Promise<T>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Wall time and this process's CPU time (ms) of each run: on a shared machine the CPU time is the steadier figure. */
async function timed(runs: number, fn: () => Promise<unknown>): Promise<{ wall: number[]; cpu: number[] }> {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c = process.cpuUsage();
    wall.push(await time(fn));
    const d = process.cpuUsage(c);
    cpu.push((d.user + d.system) / 1000);
  }
  return { wall, cpu };
}

/**
 * One GET over a keep-alive node:http connection, ending when the last byte arrived. The bytes are counted, not
 * gathered: fetch's decoding and the copying of each 250 KB body were the client's own work, and in this one process
 * the client's garbage collections also stopped the server (bench/agents times its requests the same way).
 */
const client = new http.Agent({ keepAlive: true, maxSockets: 1 });
function get(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: client, headers }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

const p50p99 = (values: number[], digits = 2) => `${percentile(values, 50).toFixed(digits)} / ${percentile(values, 99).toFixed(digits)}`;

export async function skillsBench() {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-skills-'));
  writeSkills(path.join(home, 'skills'), 1000, 'bench-');
  const k = await startTestKernel({
    home,
    only: ['skills', 'agents', 'prompt-guard', 'wasm', 'error-envelope'],
    config: '[skills]\nwatch = false\n[default_model]\nprovider = "openai"\nmodel = "m"\n',
  });
  try {
    // Server time as the kernel measures it (reply.elapsedTime), beside the client's round trip.
    const served: number[] = [];
    k.kernel.hooks.kernel.http.response.tap('bench', (e) => void (e.url === '/api/skills' && served.push(e.durationMs)));
    // The round trip ends when the last byte arrived (decoding and parsing the JSON is the client's own work).
    // Then a client that revalidates with the ETag it holds.
    const list = await timed(300, () => get(`${k.url}/api/skills`));
    const servedFull = served.splice(0);
    const etag = (await k.request('/api/skills')).headers.get('etag') ?? '';
    const revalidate = await timed(300, () => get(`${k.url}/api/skills`, { 'if-none-match': etag }));

    const src = path.join(home, 'src');
    writeSkills(src, 40, 'typical-');
    const installs: number[] = [];
    for (let i = 0; i < 40; i++)
      installs.push(await time(() => k.request('/api/skills/install', { method: 'POST', json: { source: path.join(src, `typical-${i}`) } })));

    const scanner = k.kernel.services.view('prompt-guard.scanner') as PromptScanner;
    const text = BODY.repeat(Math.ceil((10 * 1024 * 1024) / BODY.length));
    const scanMs = await time(async () => scanner.scan(text));

    const wasm = k.kernel.services.view('wasm.runtime') as WasmRuntime;
    const modulePath = path.resolve('modules/skills/bundled/text-stats/text_stats.wasm');
    await wasm.run({ modulePath, tool: 'text_stats', input: { text: 'warm up' }, capabilities: [] });
    const calls = await timed(1000, () => wasm.run({ modulePath, tool: 'text_stats', input: { text: 'a few words here' }, capabilities: [] }));

    const hooks = k.kernel.hooks.catalogue('agents.hooks')!.hooks as { beforeModelCall: { promise(c: ModelCallContext): Promise<ModelCallContext> } };
    const agentWith = (from: number) =>
      ({
        id: `bench-${from}`,
        mode: 'Normal',
        skills: Array.from({ length: 20 }, (_, i) => `bench-${from + i}`),
        systemPrompt: 'You are a bench.',
      }) as unknown as AgentRecord;
    const callOf = (agent: AgentRecord) => ({ agent, sessionId: 's', userMessage: 'hi', system: agent.systemPrompt });
    // Warm the code paths with other skill sets, then time a set never built before (a cache miss: the real build).
    for (let from = 100; from < 500; from += 20) await hooks.beforeModelCall.promise(callOf(agentWith(from)));
    const call = callOf(agentWith(0));
    const cold = await time(() => hooks.beforeModelCall.promise(call));
    const warm: number[] = [];
    for (let i = 0; i < 1000; i++) warm.push(await time(() => hooks.beforeModelCall.promise(call)));
    const built = await hooks.beforeModelCall.promise(call);

    return {
      'GET /api/skills with 1,000 skills, server p50 / p99 (ms)': p50p99(servedFull),
      'GET /api/skills with 1,000 skills, client round trip p50 / p99 (ms)': p50p99(list.wall),
      'GET /api/skills with 1,000 skills, CPU time of client + server p50 / p99 (ms)': p50p99(list.cpu),
      'GET /api/skills with 1,000 skills, If-None-Match (304) round trip p50 / p99 (ms)': p50p99(revalidate.wall),
      'install with scan, typical skill p50 / p99 (ms)': p50p99(installs, 1),
      'scanner throughput (MB/s)': (text.length / 1024 / 1024 / (scanMs / 1000)).toFixed(1),
      'WASM tool call, tiny input, p50 / p95 / p99 (ms)': `${percentile(calls.wall, 50).toFixed(2)} / ${percentile(calls.wall, 95).toFixed(2)} / ${percentile(calls.wall, 99).toFixed(2)}`,
      'WASM tool call, CPU time of the calling thread p50 / p99 (ms)': p50p99(calls.cpu),
      'system prompt with 20 skills: built (cache miss) / cached p99 (ms)': `${cold.toFixed(2)} / ${percentile(warm, 99).toFixed(3)}`,
      'system prompt length with 20 skills (chars)': built.system.length,
    };
  } finally {
    client.destroy();
    await k.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

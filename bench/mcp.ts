/**
 * MCP and A2A figures against a daemon process and an instant fake provider:
 * the overhead of tools/call on /mcp (against the same tool invoked directly in
 * the same run), an MCP tool call from the agent loop
 * over a local stdio server (the test fixture server), and 100 concurrent A2A
 * message/send through the official A2A client.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, type Task } from '@a2a-js/sdk';
import { FakeProvider } from '@talon/testing';
import { freePort, killTree, percentile, spawnDetached, waitHttp } from './util.ts';

const FIXTURE = path.resolve('modules/mcp/test/fixtures/stdio-server.mjs');
const manifest = (name: string, extra = '') =>
  `name = "${name}"\n${extra}\n[model]\nprovider = "openai"\nmodel = "fake-model"\n[capabilities]\ntools = ["agent_list"]\n`;

/** User and system CPU time of a process so far, in ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const [utime, stime] = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .slice(11, 13)
    .map(Number);
  return ((utime + stime) * 1000) / 100;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const a2aMessage = (text: string) => ({
  tenant: '',
  message: {
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately: false },
  metadata: undefined,
});

export async function mcpBench() {
  const fake = new FakeProvider().setFallback({ text: 'pong', usage: { input: 3, output: 1 } });
  await fake.start();
  const port = await freePort();
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-mcp-'));
  writeFileSync(
    path.join(home, 'config.toml'),
    `api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\nrate_limit_per_second = 1000000\n[tool_invoke]\nenabled = true\nallowlist = ["agent_list"]\n[default_model]\nprovider = "openai"\nmodel = "fake-model"\nbase_url = "${fake.url}/v1"\napi_key_env = "BENCH_FAKE_KEY"\n`,
  );
  const daemon = spawnDetached(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], { TALON_HOME: home, BENCH_FAKE_KEY: 'x' });
  const url = `http://127.0.0.1:${port}`;
  const post = async (p: string, body: unknown) => {
    const r = await fetch(url + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (r.status >= 300) throw new Error(`${p} answered ${r.status}: ${await r.text()}`);
    return r.json() as Promise<Record<string, unknown>>;
  };
  try {
    await waitHttp(`${url}/api/health`, 30_000);
    const agent = (await post('/api/agents', { manifest_toml: manifest('bench-mcp', 'mcp_servers = ["fixture"]') })).agent_id as string;
    await post('/api/mcp/servers', { name: 'fixture', transport: { type: 'stdio', command: process.execPath, args: [FIXTURE] } });
    for (let i = 0; i < 200 && !((await (await fetch(`${url}/api/mcp/servers/fixture`)).json()) as { connected: boolean }).connected; i++)
      await new Promise((r) => setTimeout(r, 50));

    // tools/call on /mcp through the official client, interleaved with a same-run baseline: the same tool through
    // POST /api/tools/agent_list/invoke (the tool's own time plus plain HTTP), and GET /api/health (HTTP alone).
    // agent_list runs in-process in microseconds, so MCP round trip − invoke round trip is the MCP layer's overhead.
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    const mcpTrip: number[] = [];
    const viaInvoke: number[] = [];
    const viaHealth: number[] = [];
    const overInvoke: number[] = [];
    const overHealth: number[] = [];
    for (let i = 0; i < 600; i++) {
      const m = await timed(() => client.callTool({ name: 'agent_list', arguments: {} }));
      const d = await timed(() => post('/api/tools/agent_list/invoke', {}));
      const h = await timed(async () => (await fetch(`${url}/api/health`)).arrayBuffer());
      if (i < 100) continue;
      mcpTrip.push(m);
      viaInvoke.push(d);
      viaHealth.push(h);
      overInvoke.push(m - d);
      overHealth.push(m - h);
    }
    // The daemon's own CPU time per call (from /proc), in blocks of 300: wall time on a loaded machine grows with the
    // load, CPU time much less. The /mcp figure less the health figure is what the MCP layer costs the service.
    const daemonCpu = async (call: () => Promise<unknown>) => {
      const before = cpuMs(daemon.pid!);
      for (let i = 0; i < 300; i++) await call();
      return (cpuMs(daemon.pid!) - before) / 300;
    };
    const cpuHealth = await daemonCpu(async () => (await fetch(`${url}/api/health`)).arrayBuffer());
    const cpuInvoke = await daemonCpu(() => post('/api/tools/agent_list/invoke', {}));
    const cpuMcp = await daemonCpu(() => client.callTool({ name: 'agent_list', arguments: {} }));
    const ask: number[] = [];
    for (let i = 0; i < 150; i++) {
      const t = await timed(() => client.callTool({ name: 'ask_agent_bench_mcp', arguments: { message: 'ping' } }));
      if (i >= 20) ask.push(t - (fake.requests.at(-1)!.ms ?? 0));
      if (i % 20 === 19) await post(`/api/agents/${agent}/session/reset`, {});
    }
    await client.close();

    // One turn with one tool call = two provider requests; overhead = turn time − both provider times. Turns with the
    // MCP tool and with a built-in one alternate (same session length, same moment of the machine's load), and the
    // figure is the median of the pairwise differences.
    const turnOverhead = async (tool: string, input: Record<string, unknown>) => {
      fake.enqueue({ toolCalls: [{ name: tool, input }] }, { text: 'done' });
      const before = fake.requests.length;
      const t = await timed(() => post(`/api/agents/${agent}/message`, { message: 'go' }));
      return t - fake.requests.slice(before).reduce((sum, r) => sum + (r.ms ?? 0), 0);
    };
    const viaMcp: number[] = [];
    const viaBuiltin: number[] = [];
    const mcpOverBuiltin: number[] = [];
    for (let i = 0; i < 140; i++) {
      if (i % 10 === 0) await post(`/api/agents/${agent}/session/reset`, {});
      const m = await turnOverhead('mcp_fixture_echo', { text: 'hi' });
      const b = await turnOverhead('agent_list', {});
      if (i < 20) continue;
      viaMcp.push(m);
      viaBuiltin.push(b);
      mcpOverBuiltin.push(m - b);
    }

    // 100 concurrent A2A message/send, each to its own agent through its card URL.
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push((await post('/api/agents', { manifest_toml: manifest(`a2a-${i}`) })).agent_id as string);
    const factory = new ClientFactory();
    const clients = await Promise.all(ids.map((id) => factory.createFromUrl(`${url}/a2a/agents/${id}/`)));
    const started = performance.now();
    const results = await Promise.allSettled(clients.map((c) => c.sendMessage(a2aMessage('ping'))));
    const a2aMs = performance.now() - started;
    const completed = results.filter((r) => r.status === 'fulfilled' && (r.value as Task).status?.state === 3).length;

    const p50McpLoop = percentile(viaMcp, 50);
    const p50Builtin = percentile(viaBuiltin, 50);
    return {
      '/mcp tools/call of agent_list, round trip through the official client (p50 ms)': percentile(mcpTrip, 50).toFixed(2),
      'same tool through POST /api/tools/agent_list/invoke, same run (p50 ms)': percentile(viaInvoke, 50).toFixed(2),
      'GET /api/health, same run (p50 ms)': percentile(viaHealth, 50).toFixed(2),
      '/mcp tools/call overhead over the same tool invoked directly (p50 ms, target ≤ 2)': percentile(overInvoke, 50).toFixed(2),
      '/mcp tools/call overhead over a trivial HTTP round trip (p50 ms)': percentile(overHealth, 50).toFixed(2),
      'daemon CPU per call: GET /api/health / tool invoke / /mcp tools/call (ms)': [cpuHealth, cpuInvoke, cpuMcp].map((n) => n.toFixed(2)).join(' / '),
      'daemon CPU of /mcp tools/call over GET /api/health (ms per call)': (cpuMcp - cpuHealth).toFixed(2),
      '/mcp tools/call ask_agent overhead over the provider (p50 ms)': percentile(ask, 50).toFixed(2),
      'agent turn with one MCP stdio tool call, overhead over the provider (p50 ms)': p50McpLoop.toFixed(2),
      'same turn with a built-in tool (p50 ms)': p50Builtin.toFixed(2),
      'MCP stdio tool call in the loop, over a built-in call (p50 of interleaved pairs, ms, target ≤ 5)': percentile(mcpOverBuiltin, 50).toFixed(2),
      '100 concurrent A2A message/send completed': `${completed}/100 in ${a2aMs.toFixed(0)} ms`,
    };
  } finally {
    await killTree(daemon);
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

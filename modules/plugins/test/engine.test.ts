/**
 * The context engine around agent turns, with real node and bash hook processes: every hook in its place
 * (bootstrap once, ingest, assemble, transform_tool_result, after_turn, compact, prepare/merge_subagent), the
 * agent allow-list, the abort policy, network isolation, persistent processes and prewarm.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TalonEvent } from '@talon/module-sdk';
import { waitFor } from '@talon/testing';
import { json, pluginToml, spawnAgent, startEnv, stopEnv, turn, type Env } from './helpers.ts';

const out = path.join(mkdtempSync(path.join(tmpdir(), 'plugins-out-')), 'calls.jsonl');
// One script for every hook: records the request, answers as its type asks.
const recorder = `const fs = require('node:fs');
let s = ''; process.stdin.on('data', (c) => (s += c)); process.stdin.on('end', () => {
  const req = JSON.parse(s);
  fs.appendFileSync(process.env.OUT_FILE, JSON.stringify(req) + '\\n');
  const replies = {
    ingest: { type: 'ingest_result', memories: [{ content: 'recorded ' + req.message }] },
    assemble: { type: 'assemble_result', system_prompt: req.system_prompt + '\\nASSEMBLED BY PLUGIN' },
    compact: { type: 'compact_result', summary: 'SUMMARY of ' + (req.messages ?? []).length + ' messages' },
    transform_tool_result: { content: 'TRANSFORMED: ' + req.content },
  };
  console.log(JSON.stringify(replies[req.type] ?? { type: 'ok' }));
});`;
const hooks = Object.fromEntries(
  ['ingest', 'after_turn', 'bootstrap', 'assemble', 'compact', 'transform_tool_result', 'prepare_subagent', 'merge_subagent'].map((h) => [
    h,
    'hooks/recorder.js',
  ]),
);
const probe = `const net = require('node:net');
let s = ''; process.stdin.on('data', (c) => (s += c)); process.stdin.on('end', () => {
  const sock = net.connect(Number(process.env.PROBE_PORT), '127.0.0.1');
  const done = (what) => { console.log(JSON.stringify({ type: 'ingest_result', memories: [{ content: process.env.TALON_PLUGIN + ' network ' + what }] })); process.exit(0); };
  sock.on('connect', () => done('reached'));
  sock.on('error', (e) => done('blocked ' + e.code));
  setTimeout(() => done('blocked timeout'), 1500);
});`;
const warm = `const token = Math.random().toString(36).slice(2);
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => {
  buf += c;
  let nl;
  while ((nl = buf.indexOf('\\n')) >= 0) {
    const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
    if (!line.trim()) continue;
    console.log('a log line first');
    console.log(JSON.stringify({ type: 'ingest_result', memories: [{ content: 'warm process ' + token + ' persistent=' + process.env.TALON_PLUGIN_PERSISTENT }] }));
  }
});`;

// One request per process, like any one-shot hook; says how long it waited for its request and for whom. Its token
// is written down when it starts: a pid does not identify a process run in a PID namespace, its own token does.
const starts = path.join(path.dirname(out), 'spare-starts.txt');
const spare = `const started = Date.now();
const token = Math.random().toString(36).slice(2);
require('node:fs').appendFileSync(process.env.STARTS_FILE, token + '\\n');
let s = ''; process.stdin.on('data', (c) => (s += c)); process.stdin.on('end', () => {
  const content = 'spare process=' + token + ' waited=' + (Date.now() - started) + ' agent=' + process.env.TALON_AGENT_ID;
  console.log(JSON.stringify({ type: 'ingest_result', memories: [{ content }] }));
});`;

let env: Env;
let server: http.Server;
before(async () => {
  server = http.createServer((_req, res) => res.end('hi'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  process.env.PROBE_PORT_VALUE = String((server.address() as AddressInfo).port);
  const probeEnv = '[env]\nPROBE_PORT = "${PROBE_PORT_VALUE}"\n';
  env = await startEnv({
    stack: ['recorder', 'sealed', 'open', 'warm', 'strict', 'spare'],
    extra: '[plugins]\ncompact_after_messages = 3\n',
    plugins: {
      recorder: { 'plugin.toml': pluginToml('recorder', hooks, 'allow_filesystem = true', `[env]\nOUT_FILE = "${out}"\n`), 'hooks/recorder.js': recorder },
      sealed: { 'plugin.toml': pluginToml('sealed', { ingest: 'hooks/probe.js' }, '', probeEnv), 'hooks/probe.js': probe },
      open: { 'plugin.toml': pluginToml('open', { ingest: 'hooks/probe.js' }, 'allow_network = true', probeEnv), 'hooks/probe.js': probe },
      warm: { 'plugin.toml': pluginToml('warm', { ingest: 'hooks/warm.js' }, 'persistent_subprocess = true'), 'hooks/warm.js': warm },
      spare: {
        'plugin.toml': pluginToml('spare', { ingest: 'hooks/spare.js' }, 'prespawn = true\nallow_filesystem = true', `[env]\nSTARTS_FILE = "${starts}"\n`),
        'hooks/spare.js': spare,
      },
      strict: {
        'plugin.toml': pluginToml('strict', { ingest: 'hooks/fail.sh' }, 'on_hook_failure = "abort"'),
        'hooks/fail.sh': '#!/bin/sh\ncat >/dev/null\necho oops >&2\nexit 1\n',
      },
    },
  });
});
after(async () => {
  await stopEnv(env);
  server.close();
});

const calls = () =>
  existsSync(out)
    ? readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];
const ofType = (type: string, agentId?: string) => calls().filter((c) => c.type === type && (!agentId || c.agent_id === agentId || c.parent_id === agentId));

test('bootstrap once, ingest and assemble each turn, transform_tool_result on tool results, after_turn and compact after', async () => {
  const agent = await spawnAgent(env.k, 'full', 'allowed_plugins = ["recorder"]', ['agent_list']);
  env.fake.enqueue({ toolCalls: [{ name: 'agent_list', input: {} }] }, { text: 'listed' });
  const first = await turn(env, agent, 'first message');
  assert.equal(first.status, 200);
  assert.match(first.system, /ASSEMBLED BY PLUGIN/);
  assert.match(first.system, /\[recorder\] recorded first message/);
  const toolRequest = JSON.stringify(env.fake.requests.at(-1)?.body);
  assert.match(toolRequest, /TRANSFORMED: /, 'the model got the transformed tool result');
  await waitFor(() => ofType('after_turn', agent).length === 1, 3000, 'after_turn');
  const at = ofType('after_turn', agent)[0] as { messages: Array<{ role: string; content: string }> };
  assert.deepEqual(at.messages.map((m) => m.role).slice(0, 1), ['user']);
  assert.equal(ofType('transform_tool_result', agent)[0].tool_name, 'agent_list');

  env.fake.enqueue({ text: 'second answer' });
  const second = await turn(env, agent, 'second message');
  assert.equal(ofType('bootstrap', agent).length, 1, 'bootstrap runs once per agent');
  assert.equal(ofType('ingest', agent).length, 2);
  await waitFor(() => ofType('compact', agent).length >= 1, 3000, 'compact after a long session');
  env.fake.enqueue({ text: 'third' });
  const third = await turn(env, agent, 'third message');
  assert.match(third.system, /## Conversation summary \(context plugin\)\nSUMMARY of \d+ messages/);
  assert.doesNotMatch(second.system, /recorded first message/, 'memories belong to their turn');
});

test("an agent's allowed_plugins narrows the stack; without plugins configured for it, no hook runs", async () => {
  const agent = await spawnAgent(env.k, 'plain', 'allowed_plugins = ["nothing-here"]');
  env.fake.enqueue({ text: 'plain' });
  const t = await turn(env, agent, 'plain turn');
  assert.doesNotMatch(t.system, /Context from plugins|ASSEMBLED/);
  // Hooks of earlier tests' agents may still be finishing: only this agent's calls count.
  assert.deepEqual(
    calls().filter((c) => c.agent_id === agent || c.parent_id === agent),
    [],
  );
  const stack = await json<{ plugins: Array<{ name: string; active: boolean }> }>(await env.k.request('/api/plugins'));
  assert.ok(stack.plugins.find((p) => p.name === 'recorder')?.active);
});

test('prepare_subagent and merge_subagent run for the parent when it spawns a subagent and the subagent ends', async () => {
  const parent = await spawnAgent(env.k, 'parent', 'allowed_plugins = ["recorder"]', ['agent_spawn'], 'agent_spawn = true');
  env.fake.enqueue({ toolCalls: [{ name: 'agent_spawn', input: { name: 'kid', system_prompt: 'You help.' } }] }, { text: 'spawned' });
  await turn(env, parent, 'make a helper');
  await waitFor(() => ofType('prepare_subagent', parent).length === 1, 3000, 'prepare_subagent');
  const child = ofType('prepare_subagent', parent)[0].child_id as string;
  await env.k.request(`/api/agents/${child}`, { method: 'DELETE' });
  await waitFor(() => ofType('merge_subagent', parent).length === 1, 3000, 'merge_subagent');
});

test('without allow_network a hook has no network (a namespace where available); with it, it connects', async (t) => {
  const doctor = await json<{ isolation: { network: boolean; reason: string } }>(await env.k.request('/api/plugins/doctor'));
  if (!doctor.isolation.network) {
    t.skip(`network isolation is not available here: ${doctor.isolation.reason}`);
    return;
  }
  const agent = await spawnAgent(env.k, 'netty', 'allowed_plugins = ["sealed", "open"]');
  env.fake.enqueue({ text: 'ok' });
  const r = await turn(env, agent, 'probe');
  assert.match(r.system, /\[sealed\] sealed network blocked/);
  assert.match(r.system, /\[open\] open network reached/);
});

test('a persistent plugin keeps one process across calls; prewarm starts it; reload replaces it', async () => {
  const pre = await json<{ results: Record<string, { ok: boolean; processes: Array<{ pid: number }> }> }>(
    await env.k.request('/api/plugins/prewarm', { method: 'POST', json: { plugins: ['warm', 'recorder', 'nope'] } }),
  );
  assert.equal(pre.results.warm.ok, true);
  assert.equal(pre.results.warm.processes.length, 1);
  assert.equal(pre.results.recorder.ok, false);
  assert.equal(pre.results.nope.ok, false);
  const agent = await spawnAgent(env.k, 'warmed', 'allowed_plugins = ["warm"]');
  const pids: string[] = [];
  for (const m of ['one', 'two']) {
    env.fake.enqueue({ text: m });
    const r = await turn(env, agent, m);
    pids.push(/warm process (\w+) persistent=1/.exec(r.system)?.[1] ?? 'none');
  }
  assert.equal(pids[0], pids[1], 'the same process answered both');
  assert.notEqual(pids[0], 'none');
  const reload = await json<{ processes_evicted: number }>(await env.k.request('/api/plugins/warm/reload', { method: 'POST' }));
  assert.equal(reload.processes_evicted, 1);
  env.fake.enqueue({ text: 'three' });
  const r = await turn(env, agent, 'three');
  assert.notEqual(/warm process (\w+)/.exec(r.system)?.[1], pids[0], 'a new process after the reload');
});

test('prespawn: the next call of an agent finds its one-shot process already started; reload stops the spare', async () => {
  const agent = await spawnAgent(env.k, 'spared', 'allowed_plugins = ["spare"]');
  const seen = async (m: string) => {
    env.fake.enqueue({ text: m });
    const r = await turn(env, agent, m);
    const hit = /spare process=(\w+) waited=(\d+) agent=(\S+)/.exec(r.system);
    assert.ok(hit, r.system);
    return { process: hit[1], waited: Number(hit[2]), agent: hit[3] };
  };
  const spares = async () =>
    (await json<{ spare_processes: Array<{ hook: string; agent_id: string; pid: number }> }>(await env.k.request('/api/plugins/spare/status'))).spare_processes;
  const first = await seen('one');
  assert.equal(first.agent, agent);
  // A spare is listed as soon as it is made, before its process has a pid: wait for the pid that identifies it.
  const ready = (await waitFor(
    async () => {
      const listed = await spares();
      return listed.length === 1 && listed[0].pid ? listed[0] : undefined;
    },
    5000,
    'a started spare after the first call',
  ))!;
  assert.deepEqual([ready.hook, ready.agent_id], ['ingest', agent]);
  const started = () => (existsSync(starts) ? readFileSync(starts, 'utf8').split('\n').filter(Boolean) : []);
  const spareToken = (await waitFor(() => started().find((t) => t !== first.process), 5000, "the spare's interpreter to start"))!;
  const second = await seen('two');
  assert.equal(second.process, spareToken, 'the spare, started before the call, answered it');
  assert.ok(second.waited > 0, `it was waiting for the call (${second.waited} ms)`);
  assert.notEqual(second.process, first.process, 'one request per process');
  await waitFor(() => started().length === 3, 5000, 'a fresh spare after the second call');
  assert.equal(new Set(started()).size, 3, 'the spare was used up: the next one is a new process');
  assert.equal(second.agent, agent);
  await waitFor(async () => (await spares()).length === 1, 5000, 'a spare after the second call');
  const [next] = await spares();
  const reload = await json<{ processes_evicted: number }>(await env.k.request('/api/plugins/spare/reload', { method: 'POST' }));
  assert.equal(reload.processes_evicted, 1);
  assert.deepEqual(await spares(), []);
  await waitFor(
    () => {
      try {
        process.kill(next.pid, 0);
        return false;
      } catch {
        return true;
      }
    },
    3000,
    'the spare process is gone',
  );
});

test('on_hook_failure = abort refuses the turn (503 naming the plugin); the failure is published', async () => {
  const agent = await spawnAgent(env.k, 'strictly', 'allowed_plugins = ["strict"]');
  const seen: TalonEvent[] = [];
  const scope = env.k.kernel.events.scope('plugins-test');
  scope.subscribe(['plugin.hook_failed'], (e: TalonEvent) => void seen.push(e));
  scope.commit();
  const before = env.fake.requests.length;
  const res = await env.k.request(`/api/agents/${agent}/message`, { method: 'POST', json: { message: 'hi' } });
  assert.equal(res.status, 503);
  assert.match((await json<{ error: string }>(res)).error, /context engine plugin 'strict' failed in ingest: exited with code 1: oops/);
  assert.equal(env.fake.requests.length, before, 'no model call was made');
  await waitFor(() => seen.length > 0, 2000, 'plugin.hook_failed');
  assert.deepEqual(seen[0].data, { plugin: 'strict', hook: 'ingest', agentId: agent, error: 'exited with code 1: oops', policy: 'abort' });
});

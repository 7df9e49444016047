/**
 * The hook protocol with real subprocesses (bash and node): the request on stdin, the last JSON line of stdout,
 * and what a failing hook does to a turn (hang, garbage, non-zero exit, flood: never beyond the limit).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { AGENT_TEST_KEY_ENV, waitFor } from '@talon/testing';
import { json, pluginToml, spawnAgent, startEnv, stopEnv, turn, type Env } from './helpers.ts';

// Each echo plugin answers with what it received, so the test sees the request as the hook saw it.
const bashEcho = `#!/usr/bin/env bash
req=$(cat)
echo "some log line"
echo '{"not": "the answer"}'
esc=$(printf '%s' "$req" | sed 's/\\\\/\\\\\\\\/g; s/"/\\\\"/g')
printf '{"type":"ingest_result","memories":[{"content":"bash saw %s"}]}\\n' "$esc"
echo "trailing garbage"
`;
const nodeEnv = `let s = ''; process.stdin.on('data', (c) => (s += c)); process.stdin.on('end', () => {
  const names = Object.keys(process.env).sort().join(',');
  console.log(JSON.stringify({ type: 'ingest_result', memories: [{ content: 'node env ' + names + ' tmp=' + process.env.TMPDIR + ' home=' + process.env.HOME + ' token=' + (process.env.PLUGIN_TOKEN ? 'set' : 'unset') }] }));
});`;
const hang = `#!/usr/bin/env bash\ncat > /dev/null\nsleep 313.7 &\nsleep 300\n`;
const garbage = `#!/usr/bin/env bash\ncat > /dev/null\necho "this is not json"\necho "{broken"\n`;
const exits = `#!/usr/bin/env bash\ncat > /dev/null\necho '{"type":"ingest_result","memories":[{"content":"should not count"}]}'\necho "boom" >&2\nexit 3\n`;
const flood = `#!/usr/bin/env bash\ncat > /dev/null\nyes '{"type":"ingest_result","memories":[]}'\n`;
const stuck = `#!/usr/bin/env bash\ncat > /dev/null\nsleep 271.3\n`;
const aborting = `#!/usr/bin/env bash\ncat > /dev/null\nexit 1\n`;

const plugins = {
  'bash-echo': { 'plugin.toml': pluginToml('bash-echo', { ingest: 'hooks/ingest.sh' }), 'hooks/ingest.sh': bashEcho },
  'node-env': {
    'plugin.toml': pluginToml('node-env', { ingest: 'hooks/ingest.js' }, '', '[env]\nPLUGIN_TOKEN = "${PLUGINS_TEST_DECLARED}"\n'),
    'hooks/ingest.js': nodeEnv,
  },
  hang: { 'plugin.toml': pluginToml('hang', { ingest: 'hooks/ingest.sh' }, 'hook_timeout_secs = 1'), 'hooks/ingest.sh': hang },
  garbage: { 'plugin.toml': pluginToml('garbage', { ingest: 'hooks/ingest.sh' }), 'hooks/ingest.sh': garbage },
  exits: { 'plugin.toml': pluginToml('exits', { ingest: 'hooks/ingest.sh' }), 'hooks/ingest.sh': exits },
  flood: { 'plugin.toml': pluginToml('flood', { ingest: 'hooks/ingest.sh' }, 'hook_timeout_secs = 20'), 'hooks/ingest.sh': flood },
  stuck: { 'plugin.toml': pluginToml('stuck', { ingest: 'hooks/ingest.sh' }, 'hook_timeout_secs = 25'), 'hooks/ingest.sh': stuck },
  aborting: { 'plugin.toml': pluginToml('aborting', { ingest: 'hooks/ingest.sh' }, 'on_hook_failure = "abort"'), 'hooks/ingest.sh': aborting },
};

const pgrep = (pattern: string) => {
  try {
    return execFileSync('pgrep', ['-f', pattern]).toString().trim();
  } catch {
    return '';
  }
};

let env: Env;
before(async () => {
  process.env.PLUGINS_TEST_DECLARED = 'declared-value';
  process.env.PLUGINS_TEST_UNDECLARED_SECRET = 'must-not-leak';
  env = await startEnv({
    plugins,
    stack: ['bash-echo', 'node-env', 'hang', 'garbage', 'exits', 'flood', 'stuck'],
    extra: '[plugins]\nmax_output_bytes = 65536\n',
  });
});
after(() => stopEnv(env));

const health = async (name: string) =>
  json<{ hook_stats: Record<string, { calls: number; errors: number; last_error: string | null }> }>(await env.k.request(`/api/plugins/${name}/health`));

test('ingest gets {type, agent_id, message, peer_id} on stdin; the last JSON line is the answer; its memories reach the system prompt', async () => {
  const agent = await spawnAgent(env.k, 'reader', 'allowed_plugins = ["bash-echo", "node-env"]');
  env.fake.enqueue({ text: 'hello back' });
  const t = await turn(env, agent, 'hello there');
  assert.equal(t.status, 200);
  assert.match(t.system, /## Context from plugins/);
  assert.match(t.system, /\[bash-echo\] bash saw \{"agent_id":"[0-9a-f-]{36}","message":"hello there","peer_id":null,.*"type":"ingest"\}/);
  assert.doesNotMatch(t.system, /not": "the answer/);
});

test('hooks run with a cleared environment plus the declared variables and a private temporary folder', async () => {
  const agent = await spawnAgent(env.k, 'envy', 'allowed_plugins = ["node-env"]');
  env.fake.enqueue({ text: 'ok' });
  const t = await turn(env, agent, 'env please');
  const line = /\[node-env\] node env (\S+) tmp=(\S+) home=(\S+) token=(\w+)/.exec(t.system);
  assert.ok(line, t.system);
  const names = line[1].split(',');
  assert.ok(!names.includes('PLUGINS_TEST_UNDECLARED_SECRET') && !names.includes(AGENT_TEST_KEY_ENV), line[1]);
  assert.ok(names.includes('PLUGIN_TOKEN') && names.includes('TALON_AGENT_ID') && names.includes('PATH'));
  assert.equal(line[4], 'set');
  assert.equal(line[2], line[3], 'HOME is the private folder');
  assert.match(line[2], /data\/plugins\/run\/[^/]+\/node-env-/);
  const { existsSync } = await import('node:fs');
  assert.equal(existsSync(line[2]), false, 'the private folder is removed after the call');
});

test('a hanging hook is killed with its process tree at its limit; the turn goes on with the default engine', async () => {
  const agent = await spawnAgent(env.k, 'patient', 'allowed_plugins = ["hang"]');
  env.fake.enqueue({ text: 'still answered' });
  const started = Date.now();
  const t = await turn(env, agent, 'wait for it');
  const ms = Date.now() - started;
  assert.equal(t.status, 200);
  assert.equal((t.body as { response: string }).response, 'still answered');
  assert.ok(ms < 4000, `the turn waited ${ms} ms for a hook limited to 1 s`);
  const h = await health('hang');
  assert.equal(h.hook_stats.ingest.errors, 1);
  assert.match(h.hook_stats.ingest.last_error ?? '', /no answer within 1 s/);
  assert.equal(pgrep('sleep 313.7'), '', 'the background child of the hook was killed too');
});

/** A turn of an agent whose only plugin is `name`: it answers, within `boundMs`, without the plugin's context. */
async function survives(name: string, boundMs: number): Promise<string> {
  const agent = await spawnAgent(env.k, `victim-${name}`, `allowed_plugins = ["${name}"]`);
  env.fake.enqueue({ text: `fine ${name}` });
  const started = Date.now();
  const t = await turn(env, agent, 'go');
  const ms = Date.now() - started;
  assert.equal(t.status, 200);
  assert.equal((t.body as { response: string }).response, `fine ${name}`);
  assert.ok(ms < boundMs, `${name} held the turn ${ms} ms`);
  assert.doesNotMatch(t.system, /Context from plugins/);
  const h = await health(name);
  assert.equal(h.hook_stats.ingest.errors, 1);
  return h.hook_stats.ingest.last_error ?? '';
}

test('a hook that prints garbage fails at once; the turn goes on with the default engine', async () => {
  assert.match(await survives('garbage', 5000), /needs memories/);
});

test('a hook that exits non-zero fails (its stderr named) although it printed an answer; the turn goes on', async () => {
  assert.match(await survives('exits', 5000), /exited with code 3: boom/);
});

test('a hook that floods stdout is killed as soon as it passes the output limit, long before its time limit', async () => {
  assert.match(await survives('flood', 5000), /printed more than 65536 bytes/);
  assert.equal(pgrep('^yes \\{"type":"ingest_result"'), '', 'the flooding process is gone');
});

test('when the hook launcher dies mid-call, the call fails at once, its hook is killed, and the next call starts a new launcher', async () => {
  const launcherPid = async () => (await json<{ launcher: { pid: number | null } }>(await env.k.request('/api/plugins/doctor'))).launcher.pid;
  const agent = await spawnAgent(env.k, 'orphaned', 'allowed_plugins = ["stuck"]');
  env.fake.enqueue({ text: 'went on' });
  const started = Date.now();
  const pending = turn(env, agent, 'stall');
  await waitFor(() => pgrep('sleep 271.3') !== '', 10_000, 'the stuck hook to run');
  const pid = await launcherPid();
  assert.ok(pid);
  process.kill(pid, 'SIGKILL');
  const t = await pending;
  assert.equal(t.status, 200);
  assert.ok(Date.now() - started < 15_000, 'the turn did not wait for the 25 s limit');
  assert.match((await health('stuck')).hook_stats.ingest.last_error ?? '', /the hook launcher exited \(SIGKILL\)/);
  await waitFor(() => pgrep('sleep 271.3') === '', 5000, 'the hook of the dead launcher to be killed');
  env.fake.enqueue({ text: 'fresh' });
  const echo = await spawnAgent(env.k, 'after-crash', 'allowed_plugins = ["bash-echo"]');
  const next = await turn(env, echo, 'again');
  assert.match(next.system, /\[bash-echo\] bash saw/);
  const again = await launcherPid();
  assert.ok(again && again !== pid, 'a new launcher');
});

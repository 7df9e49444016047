/**
 * The scaffold of each of the eleven runtimes: its files, and, where the runtime's launcher is installed here, its
 * ingest and after_turn hooks running in a real turn. A runtime that is missing is skipped with the reason.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { setConfig, waitFor } from '@talon/testing';
import { json, spawnAgent, startEnv, stopEnv, turn, type Env } from './helpers.ts';

const RUNTIMES = ['python', 'native', 'v', 'node', 'deno', 'go', 'ruby', 'bash', 'bun', 'php', 'lua'] as const;
const EXT: Record<string, string> = {
  python: '.py',
  native: '',
  v: '.v',
  node: '.js',
  deno: '.ts',
  go: '.go',
  ruby: '.rb',
  bash: '.sh',
  bun: '.ts',
  php: '.php',
  lua: '.lua',
};

let env: Env;
let available: Record<string, { available: boolean; install_hint: string; problem: string | null }> = {};
before(async () => {
  env = await startEnv();
  for (const runtime of RUNTIMES) {
    const res = await env.k.request('/api/plugins/scaffold', {
      method: 'POST',
      json: { name: `sc-${runtime}`, description: `Scaffolded ${runtime}`, runtime },
    });
    assert.equal(res.status, 201, runtime);
  }
  const doctor = await json<{ runtimes: Array<{ runtime: string; available: boolean; install_hint: string; problem: string | null }> }>(
    await env.k.request('/api/plugins/doctor'),
  );
  available = Object.fromEntries(doctor.runtimes.map((r) => [r.runtime, r]));
});
after(() => stopEnv(env));

test('the scaffold of each runtime has plugin.toml, seven hooks, a README, and loads with valid hooks', async () => {
  for (const runtime of RUNTIMES) {
    const dir = path.join(env.home, 'plugins', `sc-${runtime}`);
    const toml = readFileSync(path.join(dir, 'plugin.toml'), 'utf8');
    assert.match(toml, new RegExp(`runtime = "${runtime}"`));
    assert.match(toml, new RegExp(`ingest = "hooks/ingest${EXT[runtime].replace('.', '\\.')}"`));
    for (const hook of ['ingest', 'after_turn', 'bootstrap', 'assemble', 'compact', 'prepare_subagent', 'merge_subagent']) {
      const file = path.join(dir, 'hooks', `${hook}${EXT[runtime]}`);
      assert.ok(existsSync(file), `${runtime} ${hook}`);
      assert.ok(statSync(file).mode & 0o100, `${runtime} ${hook} is executable`);
    }
    assert.ok(existsSync(path.join(dir, 'README.md')));
    const p = await json<{ status: string; hooks_valid: boolean }>(await env.k.request(`/api/plugins/sc-${runtime}`));
    assert.deepEqual([p.status, p.hooks_valid], ['loaded', true], runtime);
  }
  assert.ok(existsSync(path.join(env.home, 'plugins', 'sc-python', 'requirements.txt')));
});

for (const runtime of RUNTIMES) {
  test(`the ${runtime} scaffold's ingest and after_turn hooks run in a turn`, async (t) => {
    if (!available[runtime]?.available) {
      const r = available[runtime];
      const reason = `runtime ${runtime} is not available on this machine: ${r?.problem ?? 'unknown'} (${r?.install_hint ?? 'no hint'})`;
      console.log(`# skipped: ${reason}`);
      t.skip(reason);
      return;
    }
    await setConfig(env.k, 'context_engine', { plugin_stack: [`sc-${runtime}`] });
    const agent = await spawnAgent(env.k, `agent-${runtime}`);
    env.fake.enqueue({ text: `answer from ${runtime}` });
    const r = await turn(env, agent, 'three little words');
    assert.equal(r.status, 200);
    assert.match(r.system, new RegExp(`\\[sc-${runtime}\\] The user'?s message has 3 words\\.`));
    await waitFor(
      async () => {
        const h = await json<{ hook_stats: Record<string, { calls: number; errors: number }> }>(await env.k.request(`/api/plugins/sc-${runtime}/health`));
        return h.hook_stats.after_turn?.calls === 1 ? h : undefined;
      },
      10_000,
      `after_turn of ${runtime}`,
    ).then((h) => assert.equal(h!.hook_stats.after_turn.errors, 0, runtime));
  });
}

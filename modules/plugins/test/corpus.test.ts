/**
 * The reference registry's plugins (librefang/librefang-registry plugins/*), when a local copy is given in
 * TALON_PLUGIN_CORPUS (the registry's root folder): each installs through the registry and its ingest hook runs in a
 * real turn. Without the variable the test is skipped and says why (the corpus is fetched outside the repository).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { setConfig } from '@talon/testing';
import { json, spawnAgent, startEnv, stopEnv, turn } from './helpers.ts';

const corpus = process.env.TALON_PLUGIN_CORPUS;
const reason = corpus ? undefined : 'TALON_PLUGIN_CORPUS is not set (a local copy of librefang/librefang-registry); the corpus run is skipped';
if (reason) console.log(`# skipped: ${reason}`);

test('the reference registry plugins install and their ingest hooks run', { skip: reason }, async () => {
  const names = readdirSync(path.join(corpus!, 'plugins')).filter((d) => existsSync(path.join(corpus!, 'plugins', d, 'plugin.toml')));
  const env = await startEnv({ extra: `[hub]\nregistry_url = "${corpus}"\n` });
  const figures = { plugins: names.length, installed: 0, with_ingest: 0, ingest_ok: 0, failures: [] as string[] };
  try {
    for (const name of names) {
      const res = await env.k.request('/api/plugins/install', { method: 'POST', json: { source: 'registry', name } });
      if (res.status !== 201) {
        figures.failures.push(`${name}: install ${res.status} ${(await json<{ error: string }>(res)).error}`);
        continue;
      }
      figures.installed++;
      const detail = await json<{ hooks: Record<string, string> }>(await env.k.request(`/api/plugins/${name}`));
      if (!detail.hooks.ingest) continue;
      figures.with_ingest++;
      await setConfig(env.k, 'context_engine', { plugin_stack: [name] });
      const agent = await spawnAgent(env.k, `corpus-${name}`);
      env.fake.enqueue({ text: 'ok' });
      const r = await turn(env, agent, 'TODO: email bob@example.com about the Berlin launch on Friday. I love this plan!');
      assert.equal(r.status, 200, name);
      const health = await json<{ hook_stats: { ingest?: { errors: number; last_error: string | null } } }>(await env.k.request(`/api/plugins/${name}/health`));
      if (health.hook_stats.ingest?.errors === 0) figures.ingest_ok++;
      else figures.failures.push(`${name}: ingest ${health.hook_stats.ingest?.last_error}`);
    }
    console.log(`# corpus: ${JSON.stringify(figures)}`);
    assert.equal(figures.installed, names.length, figures.failures.join('\n'));
    // A hook may fail here only for a Python package this machine lacks (install-deps needs the package index).
    const otherFailures = figures.failures.filter((f) => !/No module named '[\w.]+'/.test(f));
    assert.deepEqual(otherFailures, []);
    assert.equal(figures.ingest_ok + figures.failures.length, figures.with_ingest);
  } finally {
    await stopEnv(env);
  }
});

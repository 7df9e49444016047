/**
 * Hot reload is off on PostgreSQL (issue 30, item 2): the database may be shared by the nodes of a fleet, each with its
 * own code and config.toml, so a module reloaded, restarted or switched on the one node a request reached would split
 * the fleet. Those requests answer 409 there; settings that change no module stay allowed. On SQLite all of it works.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { postgresMissing, startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const KEY = 'fleet-reload-key-0123456789';
const only = ['config-api', 'goals', 'legacy-paths', 'error-envelope', 'auth'];
const pgMissing = { skip: postgresMissing() };

const boot = (database: 'sqlite' | 'postgres', dev = false) =>
  startTestKernel({ only, dev, database, config: `api_key = "${KEY}"\nlog_level = "info"\n[modules]\ndisabled = []\n` });

async function call(k: TestKernel, pathname: string, method = 'GET', json?: unknown): Promise<{ status: number; body: { error?: string } }> {
  const res = await k.request(pathname, { method, json, headers: { authorization: `Bearer ${KEY}` } });
  return { status: res.status, body: (await res.json()) as { error?: string } };
}
const goalsState = (k: TestKernel) => k.kernel.modules().find((m) => m.id === 'goals')?.state;
const configFile = (k: TestKernel) => path.join(k.home, 'config.toml');

test('on PostgreSQL: switching a module, a config reload that would switch one and /api/restart answer 409; settings still change', pgMissing, async () => {
  const k = await boot('postgres');
  try {
    const file = readFileSync(configFile(k), 'utf8');
    for (const [pathname, method, body] of [
      ['/api/modules/goals/disable', 'PUT', undefined],
      ['/api/config/set', 'POST', { path: 'modules.disabled', value: ['goals'] }],
      ['/api/restart', 'POST', undefined],
    ] as const) {
      const res = await call(k, pathname, method, body);
      assert.equal(res.status, 409, `${method} ${pathname}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.error ?? '', /split the fleet/);
      assert.match(res.body.error ?? '', /rolling/);
    }
    assert.match((await call(k, '/api/modules/goals/disable', 'PUT')).body.error ?? '', /\(goals\)/, 'names the module');
    assert.equal(goalsState(k), 'running');
    assert.equal(readFileSync(configFile(k), 'utf8'), file, 'config.toml is left as it was');
    assert.equal((await call(k, '/api/goals')).status, 200);

    // An edit of [modules] in the file is not picked up by a reload: the running configuration stays.
    writeFileSync(configFile(k), file.replace('disabled = []', 'disabled = ["goals"]'));
    const reload = await call(k, '/api/config/reload', 'POST');
    assert.equal(reload.status, 409, JSON.stringify(reload.body));
    assert.match(reload.body.error ?? '', /split the fleet/);
    assert.equal(goalsState(k), 'running');
    assert.deepEqual(k.kernel.config.settings().modules.disabled, []);

    // Settings that switch no module are applied as on SQLite.
    assert.equal((await call(k, '/api/config/set', 'POST', { path: 'log_level', value: 'warn' })).status, 200);
    assert.equal(k.kernel.config.settings().log_level, 'warn');
    writeFileSync(configFile(k), file);
    assert.equal((await call(k, '/api/config/reload', 'POST')).status, 200);
    assert.equal(k.kernel.config.settings().log_level, 'info');
  } finally {
    await k.stop();
  }
});

test('on PostgreSQL, --dev starts no module watcher and says why in one line', pgMissing, async () => {
  const k = await boot('postgres', true);
  try {
    const lines = k.logLines().filter((l) => /hot reload/.test(l));
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0], /hot reload is off.*split the fleet/);
  } finally {
    await k.stop();
  }
});

test('on SQLite the same requests switch, reload and restart modules', async () => {
  const k = await boot('sqlite');
  try {
    assert.equal((await call(k, '/api/modules/goals/disable', 'PUT')).status, 200);
    assert.equal(goalsState(k), 'disabled');
    assert.equal((await call(k, '/api/config/set', 'POST', { path: 'modules.disabled', value: [] })).status, 200);
    assert.equal(goalsState(k), 'running');
    writeFileSync(configFile(k), readFileSync(configFile(k), 'utf8').replace(/^disabled = .*$/m, 'disabled = ["goals"]'));
    assert.equal((await call(k, '/api/config/reload', 'POST')).status, 200);
    assert.equal(goalsState(k), 'disabled');
    const before = k.kernel.reloadCount();
    const restart = await call(k, '/api/restart', 'POST');
    assert.equal(restart.status, 202);
    await waitFor(() => k.kernel.reloadCount() > before || undefined, 10_000, 'modules restarted');
  } finally {
    await k.stop();
  }
});

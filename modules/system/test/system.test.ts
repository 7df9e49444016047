import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';

let k: TestKernel;
before(async () => {
  k = await startTestKernel({
    // llm gives the default model (and brings the catalog).
    only: ['system', 'auth', 'error-envelope', 'llm'],
    config: 'api_key = "test-key-0123456789"\n[default_model]\nprovider = "anthropic"\nmodel = "claude-x"\n',
  });
});
after(() => k?.stop());

const auth = { authorization: 'Bearer test-key-0123456789' };
const json = async (path: string, headers: Record<string, string> = auth) => {
  const res = await k.request(path, { headers });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
};

test('GET /api/health: public and redacted to status and version', async () => {
  assert.deepEqual(await json('/api/health', {}), { status: 'ok', version: k.kernel.version });
});

test('GET /api/health/detail: needs the key; database check, modules, memory', async () => {
  assert.equal((await k.request('/api/health/detail')).status, 401);
  const body = await json('/api/health/detail');
  assert.equal(body.status, 'ok');
  assert.equal(body.version, k.kernel.version);
  assert.equal(typeof body.uptime_seconds, 'number');
  assert.deepEqual(body.checks, [{ name: 'database', status: 'ok' }]);
  const modules = body.modules as Array<{ id: string; state: string }>;
  assert.deepEqual(
    modules.find((m) => m.id === 'system'),
    { id: 'system', state: 'running' },
  );
  const memory = body.memory as Record<string, number>;
  assert.ok(memory.rss > 0 && memory.heap_used > 0);
});

test('GET /api/status: running, version, uptime, agent count (0 without the agents module), provider, address, modules', async () => {
  const body = await json('/api/status');
  assert.equal(body.status, 'running');
  assert.equal(body.version, k.kernel.version);
  assert.equal(body.agent_count, 0);
  assert.equal(body.default_provider, 'anthropic');
  assert.equal(body.default_model, 'claude-x');
  assert.equal(body.api_listen, `127.0.0.1:${k.kernel.port}`);
  assert.equal(body.auth, 'bearer_token');
  assert.deepEqual((body.modules as string[]).sort(), ['auth', 'catalog', 'error-envelope', 'llm', 'secrets', 'system']);
});

test('GET /api/version and /api/versions', async () => {
  const version = await json('/api/version');
  assert.equal(version.version, k.kernel.version);
  assert.equal(version.api_version, 'v1');
  assert.equal(version.name, 'talon');
  const versions = await json('/api/versions');
  assert.equal(versions.current, 'v1');
  assert.deepEqual(versions.versions, [{ version: 'v1', status: 'stable', base_path: '/api' }]);
  assert.ok((versions.unversioned as string[]).includes('/mcp'));
});

test('GET /api/modules: every known module with its state and whether it is critical', async () => {
  const body = await json('/api/modules');
  const modules = body.modules as Array<{ id: string; state: string; version: string; critical: boolean; last_reload?: unknown }>;
  assert.equal(body.total, modules.length);
  assert.equal(body.running, 6);
  const byId = new Map(modules.map((m) => [m.id, m]));
  assert.equal(byId.get('system')?.state, 'running');
  assert.equal(byId.get('metrics')?.state, 'disabled');
  assert.equal(byId.get('auth')?.critical, true);
  assert.equal(byId.get('system')?.critical, false);
  // What goes with a module when it is switched off: every module that needs it, directly or through another.
  const dependants = (id: string) => (byId.get(id) as { dependants?: string[] } | undefined)?.dependants;
  assert.ok(dependants('agents')?.includes('hands'));
  assert.ok(dependants('llm')?.includes('agents') && dependants('llm')?.includes('workflows'), 'transitive: workflows needs agents, which needs llm');
  assert.deepEqual(dependants('request-id'), []);
  assert.ok(
    modules.every((m) => !('dir' in m) && !('last_reload' in m)),
    'no file system paths; no reload yet',
  );
});

test("GET /api/modules: a module's last reload, when and how it went", async () => {
  const before = Date.now();
  const result = await k.kernel.reloadModule('error-envelope');
  assert.ok(result.ok, result.error);
  const modules = (await json('/api/modules')).modules as Array<{ id: string; last_reload?: { at: string; ok: boolean; ms: number; error?: string } }>;
  const reload = modules.find((m) => m.id === 'error-envelope')?.last_reload;
  assert.ok(reload, 'last_reload is shown');
  assert.equal(reload.ok, true);
  assert.equal(typeof reload.ms, 'number');
  assert.ok(Date.parse(reload.at) >= before - 1000, reload.at);
  assert.equal(reload.error, undefined);
  assert.equal(modules.find((m) => m.id === 'auth')?.last_reload, undefined, 'only the reloaded module');
  assert.equal((await json('/api/status')).hot_reloads, 1);
});

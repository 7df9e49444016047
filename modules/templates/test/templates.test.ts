import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

let k: TestKernel;
before(async () => {
  k = await startTestKernel({
    only: ['templates', 'agents', 'error-envelope', 'tools', 'skills'],
    config: '[default_model]\nprovider = "openai"\nmodel = "m"\n',
  });
  mkdirSync(path.join(k.home, 'templates', 'mine'), { recursive: true });
  writeFileSync(
    path.join(k.home, 'templates', 'mine', 'agent.toml'),
    'name = "mine"\ndescription = "My own"\nprofile = "coding"\n[model]\nprovider = "default"\nmodel = "default"\n',
  );
  writeFileSync(path.join(k.home, 'templates', 'broken.toml'), 'name = "broken\n');
});
after(() => k?.stop());

const json = async <T>(res: Response) => (await res.json()) as T;

test('GET /api/templates lists at least 12 bundled templates and the operator ones', async () => {
  const body = await json<{ templates: Array<{ name: string; description: string; source: string }>; total: number }>(await k.request('/api/templates'));
  assert.equal(body.total, body.templates.length);
  const bundled = body.templates.filter((t) => t.source === 'bundled').map((t) => t.name);
  assert.ok(bundled.length >= 12);
  for (const name of ['assistant', 'coder', 'researcher', 'writer', 'analyst', 'ops', 'support']) assert.ok(bundled.includes(name), name);
  assert.deepEqual(
    body.templates.find((t) => t.name === 'mine'),
    { name: 'mine', description: 'My own', source: 'user' },
  );
});

test('every bundled template spawns as-is', async () => {
  const list = await json<{ templates: Array<{ name: string; source: string }> }>(await k.request('/api/templates'));
  for (const t of list.templates.filter((x) => x.source === 'bundled')) {
    const toml = await (await k.request(`/api/templates/${t.name}/toml`)).text();
    const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: toml } });
    assert.equal(res.status, 201, `${t.name}: ${await res.clone().text()}`);
  }
});

test('detail: manifest fields and the TOML; raw TOML is text/plain; unknown or bad names are 404 with {error}', async () => {
  const d = await json<{ name: string; manifest: { name: string; model: { provider: string }; capabilities: { tools: string[] } }; manifest_toml: string }>(
    await k.request('/api/templates/coder'),
  );
  assert.equal(d.manifest.name, 'coder');
  assert.ok(d.manifest.capabilities.tools.includes('shell_exec'));
  assert.match(d.manifest_toml, /^name = "coder"/);
  const raw = await k.request('/api/templates/coder/toml');
  assert.match(raw.headers.get('content-type') ?? '', /^text\/plain/);
  assert.equal(await raw.text(), d.manifest_toml);
  const broken = await json<{ error: string; manifest_toml: string }>(await k.request('/api/templates/broken'));
  assert.match(broken.error, /does not parse/);
  for (const url of ['/api/templates/nope', '/api/templates/nope/toml', '/api/templates/..%2Fetc', '/api/templates/a%20b/toml']) {
    const res = await k.request(url);
    assert.equal(res.status, 404, url);
    assert.match((await json<{ error: string }>(res)).error, /not found/);
  }
});

test('profiles: list, one, 404; profile = "coding" in a manifest grants its tools', async () => {
  const list = await json<Array<{ name: string; tools: string[] }>>(await k.request('/api/profiles'));
  assert.deepEqual(
    list.map((p) => p.name),
    ['minimal', 'coding', 'research', 'messaging', 'automation', 'full'],
  );
  assert.deepEqual(await json(await k.request('/api/profiles/full')), { name: 'full', tools: ['*'] });
  const missing = await k.request('/api/profiles/toString');
  assert.equal(missing.status, 404);
  const toml = await (await k.request('/api/templates/mine/toml')).text();
  const spawned = await json<{ agent_id: string }>(await k.request('/api/agents', { method: 'POST', json: { manifest_toml: toml } }));
  const tools = await json<{ tools: string[] }>(await k.request(`/api/agents/${spawned.agent_id}/tools`));
  assert.ok(tools.tools.includes('apply_patch') && tools.tools.includes('shell_exec'));
});

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { fakeServer, json, service, type FakeServer } from './helpers.ts';

const shipped = path.resolve(import.meta.dirname, '..', 'bundled', 'providers');
const root = mkdtempSync(path.join(tmpdir(), 'catalog-update-'));
const registry = path.join(root, 'registry');
const home = path.join(root, 'home');
let k: TestKernel;

const newProvider = `[provider]
id = "acme"
display_name = "Acme AI"
api_format = "openai"
base_url = "https://api.acme.example/v1"
env_var = "ACME_API_KEY"

[[models]]
id = "acme-1"
display_name = "Acme One"
tier = "smart"
context_window = 32000
input_cost_per_1m = 1
output_cost_per_1m = 4
aliases = ["acme"]

[[models]]
id = "acme/two"
display_name = "Acme Two"
context_window = 16000
`;

before(async () => {
  mkdirSync(path.join(registry, 'providers'), { recursive: true });
  mkdirSync(home);
  cpSync(shipped, path.join(registry, 'providers'), { recursive: true });
  k = await startTestKernel({ only: ['catalog', 'error-envelope'], home, config: `[catalog]\nregistry_dir = "${registry}"\n` });
});
after(async () => {
  await k?.stop();
  rmSync(root, { recursive: true, force: true });
});

test('status before any update: the shipped catalogue', async () => {
  const s = await json(await k.request('/api/catalog/status'));
  assert.match(String(s.version), /^builtin-/);
  assert.equal(s.last_update, null);
  assert.ok((s.provider_count as number) >= 49);
  assert.ok((s.model_count as number) >= 130);
  assert.equal(s.available_updates, 0, 'the registry folder equals the shipped data');
});

test('update from a folder reports added and updated models and swaps the catalogue', async () => {
  writeFileSync(path.join(registry, 'providers', 'acme.toml'), newProvider);
  const groq = path.join(registry, 'providers', 'groq.toml');
  writeFileSync(groq, readFileSync(groq, 'utf8').replace('input_cost_per_1m = 0.059', 'input_cost_per_1m = 0.07'));
  writeFileSync(path.join(registry, 'aliases.toml'), '[aliases]\n"acme-latest" = "acme/two"\n');
  writeFileSync(path.join(registry, 'VERSION'), '2026.11.21\n');
  assert.equal((await json(await k.request('/api/catalog/status'))).available_updates, 3);

  const res = await k.request('/api/catalog/update', { method: 'POST' });
  assert.equal(res.status, 200);
  assert.deepEqual(await json(res), { status: 'updated', added: 2, updated: 1, removed: 0, version: '2026.11.21' });
  assert.equal(service(k).model('acme')?.id, 'acme-1');
  assert.equal(service(k).resolveAlias('acme-latest'), 'acme/two');
  assert.equal(service(k).model('llama-3.3-70b-versatile')?.input_cost_per_1m, 0.07);
  assert.equal((await json(await k.request('/api/models/acme/two'))).provider, 'acme');
  const s = await json(await k.request('/api/catalog/status'));
  assert.equal(s.version, '2026.11.21');
  assert.equal(typeof s.last_update, 'string');
  assert.equal(s.available_updates, 0);
});

test('a bad file rejects the whole update and leaves the catalogue untouched', async () => {
  const before = (await json(await k.request('/api/models'))).total;
  writeFileSync(path.join(registry, 'providers', 'zzz-new.toml'), newProvider.replace(/acme/g, 'zzz'));
  writeFileSync(path.join(registry, 'providers', 'broken.toml'), '[provider]\nid = "broken"\ndisplay_name = "Broken"\napi_format = "openai"\nbase_url = 42\n');
  const res = await k.request('/api/catalog/update', { method: 'POST' });
  assert.equal(res.status, 502);
  const body = await json(res);
  assert.match(JSON.stringify(body), /broken\.toml/);
  assert.match(JSON.stringify(body), /unchanged/);
  assert.equal((await json(await k.request('/api/models'))).total, before);
  assert.equal(service(k).model('zzz-1'), undefined);
  assert.equal((await json(await k.request('/api/catalog/status'))).version, '2026.11.21');
  rmSync(path.join(registry, 'providers', 'broken.toml'));
  rmSync(path.join(registry, 'providers', 'zzz-new.toml'));
});

test('removed models are reported; the update survives a restart', async () => {
  rmSync(path.join(registry, 'providers', 'acme.toml'));
  writeFileSync(path.join(registry, 'aliases.toml'), '[aliases]\n');
  writeFileSync(path.join(registry, 'VERSION'), '2026.11.22\n');
  const res = await json(await k.request('/api/catalog/update', { method: 'POST' }));
  assert.deepEqual(res, { status: 'updated', added: 0, updated: 0, removed: 2, version: '2026.11.22' });
  await k.stop();
  k = await startTestKernel({ only: ['catalog', 'error-envelope'], home, config: `[catalog]\nregistry_dir = "${registry}"\n` });
  assert.equal((await json(await k.request('/api/catalog/status'))).version, '2026.11.22');
  assert.equal(service(k).model('llama-3.3-70b-versatile')?.input_cost_per_1m, 0.07);
});

test('update from a JSON bundle at registry_url; a bad bundle or unreachable URL is 502; nothing configured is 400', async () => {
  let bundle: unknown = {
    version: 'bundle-7',
    providers: [
      {
        provider: { id: 'bundled', display_name: 'Bundled', api_format: 'openai', base_url: 'http://127.0.0.1:1/v1', key_required: false },
        models: [{ id: 'b-1', display_name: 'B1', context_window: 1000 }],
      },
    ],
    aliases: { bee: 'b-1' },
  };
  const server: FakeServer = await fakeServer(() => ({ json: bundle }));
  const k2 = await startTestKernel({ only: ['catalog', 'error-envelope'], config: `[catalog]\nregistry_url = "${server.url}/registry.json"\n` });
  try {
    const ok = await json(await k2.request('/api/catalog/update', { method: 'POST' }));
    assert.equal(ok.version, 'bundle-7');
    assert.equal(ok.added, 1);
    assert.equal(service(k2).model('bee')?.id, 'b-1');
    bundle = { version: 'bundle-8', providers: [{ provider: { id: 'bundled' }, models: [] }] };
    const bad = await k2.request('/api/catalog/update', { method: 'POST' });
    assert.equal(bad.status, 502);
    assert.match(JSON.stringify(await json(bad)), /providers\[0\]/);
    assert.equal(service(k2).model('b-1')?.provider, 'bundled', 'still the previous catalogue');
  } finally {
    await k2.stop();
    await server.close();
  }
  const k3 = await startTestKernel({ only: ['catalog', 'error-envelope'], config: `[catalog]\nregistry_url = "${server.url}/gone.json"\n` });
  try {
    assert.equal((await k3.request('/api/catalog/update', { method: 'POST' })).status, 502);
  } finally {
    await k3.stop();
  }
  const k4 = await startTestKernel({ only: ['catalog', 'error-envelope'] });
  try {
    const none = await k4.request('/api/catalog/update', { method: 'POST' });
    assert.equal(none.status, 400);
    assert.match(JSON.stringify(await json(none)), /registry_dir or registry_url/);
  } finally {
    await k4.stop();
  }
});

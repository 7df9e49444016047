import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { startTestKernel, type TestKernel } from '@talon/module-sdk/testing';

const only = ['config-api', 'error-envelope'];
const home = mkdtempSync(path.join(tmpdir(), 'talon-config-api-'));
const file = path.join(home, 'config.toml');
let k: TestKernel;

before(async () => {
  k = await startTestKernel({
    only,
    home,
    config: '# my settings\napi_key = "top-secret"\nrate_limit_per_second = 10\n[default_model]\nprovider = "openai"\n',
  });
});
after(async () => {
  await k?.stop();
  rmSync(home, { recursive: true, force: true });
});

const post = (p: string, body?: unknown) => k.request(p, { method: 'POST', ...(body === undefined ? {} : { json: body }) });
const getJson = async (p: string) => {
  const res = await k.request(p);
  assert.equal(res.status, 200, p);
  return (await res.json()) as Record<string, unknown>;
};
async function expect400(res: Response, message: string | RegExp) {
  assert.equal(res.status, 400);
  const { error } = (await res.json()) as { error: string };
  if (typeof message === 'string') assert.equal(error, message);
  else assert.match(error, message);
}

test('GET /api/config: the effective configuration, secrets redacted', async () => {
  const config = await getJson('/api/config');
  assert.equal(config.api_key, '<redacted>');
  assert.equal(config.rate_limit_per_second, 10);
  assert.equal(config.log_level, 'silent');
  assert.deepEqual(config.cors_origins, [], 'defaults are filled in');
});

test('GET /api/config/schema and /api/registry/schema', async () => {
  const schema = await getJson('/api/config/schema');
  assert.equal(schema.type, 'object');
  assert.ok((schema.properties as Record<string, unknown>).rate_limit_per_second);
  const editor = await getJson('/api/registry/schema');
  assert.equal(editor.$id, `http://127.0.0.1:${k.kernel.port}/api/registry/schema`);
  assert.equal(editor.title, 'Talon configuration (config.toml)');
  assert.deepEqual(editor.properties, schema.properties);
});

test('GET /api/config/export: TOML by default, JSON on request, secrets redacted, 400 for other formats', async () => {
  const res = await k.request('/api/config/export');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/toml/);
  const toml = parse(await res.text()) as Record<string, unknown>;
  assert.equal(toml.api_key, '<redacted>');
  assert.equal((toml.default_model as Record<string, unknown>).model, 'gpt-4o-mini', 'defaults included');
  const asJson = await getJson('/api/config/export?format=json');
  assert.equal(asJson.api_key, '<redacted>');
  assert.equal(asJson.rate_limit_per_second, 10);
  await expect400(await k.request('/api/config/export?format=yaml'), "unsupported export format 'yaml' (use toml or json)");
});

test('POST /api/config/set: refuses bad requests naming the problem', async () => {
  await expect400(await post('/api/config/set', { path: 'log_level' }), "body must have required property 'value'");
  await expect400(await post('/api/config/set', { value: 1 }), /^body must have property 'path'/);
  await expect400(await post('/api/config/set', { path: 'no_such_key', value: 1 }), /no_such_key/);
  await expect400(await post('/api/config/set', { path: 'rate_limit_per_second', value: 'fast' }), /rate_limit_per_second/);
  await expect400(await post('/api/config/set', { path: 'rate_limit_per_second', value: -1 }), /rate_limit_per_second/);
  await expect400(await post('/api/config/set', { path: 'log_level', value: null }), /null/);
  await expect400(await post('/api/config/set', { path: 'log_level', key: 'api_key', value: 'x' }), /both 'path' and 'key'/);
  await expect400(await post('/api/config/set'), "body must have required property 'value'");
  // Nothing changed.
  assert.equal((await getJson('/api/config')).rate_limit_per_second, 10);
});

test('POST /api/config/set: applies at once, persists to the file (comments kept), redacts secrets in the reply', async () => {
  const res = await post('/api/config/set', { path: 'rate_limit_per_second', value: 25 });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: 'updated', path: 'rate_limit_per_second', value: 25, restart_required: false });
  assert.equal((await getJson('/api/config')).rate_limit_per_second, 25);
  assert.match(readFileSync(file, 'utf8'), /# my settings/);
  assert.equal((parse(readFileSync(file, 'utf8')) as Record<string, unknown>).rate_limit_per_second, 25);

  const nested = await post('/api/config/set', { key: 'default_model.model', value: 'gpt-5' });
  assert.deepEqual(await nested.json(), { status: 'updated', path: 'default_model.model', value: 'gpt-5', restart_required: false });

  const secret = await post('/api/config/set', { path: 'api_key', value: 'new-secret' });
  assert.deepEqual(await secret.json(), { status: 'updated', path: 'api_key', value: '<redacted>', restart_required: false });

  const restart = await post('/api/config/set', { path: 'modules.disabled', value: [] });
  assert.equal(((await restart.json()) as { restart_required: boolean }).restart_required, true);
});

test('POST /api/config/reload: a broken file is 400 with the reason and the running config stays; a good one is adopted', async () => {
  const good = readFileSync(file, 'utf8');
  writeFileSync(file, `${good}\nrate_limit_per_second = = 3\n`);
  await expect400(await post('/api/config/reload'), /TOML syntax error/);
  writeFileSync(file, good.replace(/rate_limit_per_second = .*/, 'rate_limit_per_second = "lots"'));
  await expect400(await post('/api/config/reload'), /rate_limit_per_second/);
  assert.equal((await getJson('/api/config')).rate_limit_per_second, 25, 'old config still served');

  writeFileSync(file, good.replace(/rate_limit_per_second = .*/, 'rate_limit_per_second = 7'));
  const res = await post('/api/config/reload');
  assert.equal(res.status, 200);
  const body = (await res.json()) as { status: string; changed: string[] };
  assert.equal(body.status, 'reloaded');
  assert.ok(body.changed.includes('rate_limit_per_second'), body.changed.join());
  assert.equal((await getJson('/api/config')).rate_limit_per_second, 7);
});

test('a value set over the API survives a restart with the same home', async () => {
  assert.equal((await post('/api/config/set', { path: 'default_model.provider', value: 'anthropic' })).status, 200);
  await k.stop();
  // startTestKernel writes config.toml even for a reused home: hand it the persisted file.
  k = await startTestKernel({ only, home, config: readFileSync(file, 'utf8') });
  const config = await getJson('/api/config');
  assert.equal((config.default_model as Record<string, unknown>).provider, 'anthropic');
  assert.equal((config.default_model as Record<string, unknown>).model, 'gpt-5');
  assert.equal(config.rate_limit_per_second, 7);
});

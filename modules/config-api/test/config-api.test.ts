import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { startTestKernel, type TestKernel } from '@talon/testing';

// The owners of the keys the tests edit: api_key (auth), rate_limit_per_second (rate-limit), cors_origins (cors), [logs].
const only = ['config-api', 'error-envelope', 'auth', 'rate-limit', 'cors', 'logs'];
const home = mkdtempSync(path.join(tmpdir(), 'talon-config-api-'));
const file = path.join(home, 'config.toml');
const initial = '# my settings\napi_key = "top-secret-0123456789"\nrate_limit_per_second = 10\n\n[logs]\n# a week of files\nretention_days = 7\n';
let k: TestKernel;
/** The bearer token the next request sends: the tests change api_key. */
let token = 'top-secret-0123456789';
/** config.toml as the test kernel wrote it (it adds api_listen and log_level). */
let written: string;

before(async () => {
  k = await startTestKernel({ only, home, config: initial });
  written = readFileSync(file, 'utf8');
});
after(async () => {
  await k?.stop();
  rmSync(home, { recursive: true, force: true });
});

const request = (p: string, init: RequestInit & { json?: unknown } = {}) => k.request(p, { ...init, headers: { authorization: `Bearer ${token}` } });
const post = (p: string, body?: unknown) => request(p, { method: 'POST', ...(body === undefined ? {} : { json: body }) });
const getJson = async (p: string) => {
  const res = await request(p);
  assert.equal(res.status, 200, p);
  return (await res.json()) as Record<string, unknown>;
};
const fileData = () => parse(readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>;
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
  assert.deepEqual(config.logs, { file: true, backlog_lines: 1000, retention_days: 7 });
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
  const res = await request('/api/config/export');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/toml/);
  const toml = parse(await res.text()) as Record<string, unknown>;
  assert.equal(toml.api_key, '<redacted>');
  assert.equal((toml.logs as Record<string, unknown>).file, true, 'defaults included');
  const asJson = await getJson('/api/config/export?format=json');
  assert.equal(asJson.api_key, '<redacted>');
  assert.equal(asJson.rate_limit_per_second, 10);
  await expect400(await request('/api/config/export?format=yaml'), "unsupported export format 'yaml' (use toml or json)");
});

test('POST /api/config/set: refuses bad requests, unknown keys and invalid values naming the problem, and changes nothing', async () => {
  await expect400(await post('/api/config/set', { path: 'log_level' }), "body must have required property 'value'");
  await expect400(await post('/api/config/set', { value: 1 }), /^body must have property 'path'/);
  await expect400(await post('/api/config/set', { path: 'no_such_key', value: 1 }), /^unknown configuration key 'no_such_key'/);
  await expect400(await post('/api/config/set', { path: 'logs.no_such_key', value: 1 }), /no_such_key/);
  await expect400(await post('/api/config/set', { path: 'rate_limit_per_second', value: 'fast' }), /rate_limit_per_second/);
  await expect400(await post('/api/config/set', { path: 'rate_limit_per_second', value: -1 }), /rate_limit_per_second/);
  await expect400(await post('/api/config/set', { path: 'logs.retention_days', value: 0 }), /retention_days/);
  await expect400(await post('/api/config/set', { path: 'log_level', value: null }), /null/);
  await expect400(await post('/api/config/set', { path: 'log_level', key: 'api_key', value: 'x' }), /both 'path' and 'key'/);
  await expect400(await post('/api/config/set', { path: 'logs..file', value: true }), "invalid key path 'logs..file'");
  await expect400(await post('/api/config/set'), "body must have required property 'value'");
  assert.equal((await getJson('/api/config')).rate_limit_per_second, 10);
  assert.equal(readFileSync(file, 'utf8'), written, 'the file is untouched');
});

test('POST /api/config/set: applies at once and edits the file in place, comments and layout kept', async () => {
  const res = await post('/api/config/set', { path: 'rate_limit_per_second', value: 25 });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: 'updated', path: 'rate_limit_per_second', value: 25, restart_required: false });
  assert.equal((await getJson('/api/config')).rate_limit_per_second, 25);

  const nested = await post('/api/config/set', { key: 'logs.retention_days', value: 14 });
  assert.deepEqual(await nested.json(), { status: 'updated', path: 'logs.retention_days', value: 14, restart_required: false });
  assert.equal(readFileSync(file, 'utf8'), written.replace('= 10', '= 25').replace('= 7', '= 14'), 'only the two values changed');

  const restart = await post('/api/config/set', { path: 'max_request_body_bytes', value: 16777216 });
  assert.equal(((await restart.json()) as { restart_required: boolean }).restart_required, true);
  // Modules are switched at once (test/kernel-switch.test.ts); metrics is not among this kernel's modules anyway.
  const modules = await post('/api/config/set', { path: 'modules.disabled', value: ['metrics'] });
  assert.equal(((await modules.json()) as { restart_required: boolean }).restart_required, false);
});

test('POST /api/config/set: a new top-level key lands before the first [table], where TOML reads it as top-level', async () => {
  const res = await post('/api/config/set', { path: 'cors_origins', value: ['https://app.example'] });
  assert.equal(res.status, 200);
  const text = readFileSync(file, 'utf8');
  assert.ok(text.indexOf('cors_origins') < text.indexOf('[logs]'), text);
  assert.deepEqual(fileData().cors_origins, ['https://app.example']);
  assert.equal(fileData().logs.cors_origins, undefined);
  assert.match(text, /# a week of files/);
  assert.deepEqual((await getJson('/api/config')).cors_origins, ['https://app.example']);
});

test('POST /api/config/set: a secret is applied and persisted, but never read back (reply, config, export, log)', async () => {
  const secret = await post('/api/config/set', { path: 'api_key', value: 'new-secret-value' });
  assert.deepEqual(await secret.json(), { status: 'updated', path: 'api_key', value: '<redacted>', restart_required: false });
  assert.equal((await request('/api/config')).status, 401, 'the old key no longer works');
  token = 'new-secret-value';
  assert.equal(fileData().api_key, 'new-secret-value');
  for (const p of ['/api/config', '/api/config/export', '/api/config/export?format=json']) {
    const text = await (await request(p)).text();
    assert.doesNotMatch(text, /new-secret-value/, p);
  }
  assert.ok(
    k.logLines().every((l) => !l.includes('new-secret-value')),
    'no log line carries it',
  );
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
  assert.deepEqual(body.changed, ['rate_limit_per_second']);
  assert.equal((await getJson('/api/config')).rate_limit_per_second, 7);
});

test('values set over the API survive a restart with the same home', async () => {
  assert.equal((await post('/api/config/set', { path: 'logs.file', value: false })).status, 200);
  await k.stop();
  // startTestKernel writes config.toml even for a reused home: hand it the persisted file.
  k = await startTestKernel({ only, home, config: readFileSync(file, 'utf8') });
  const config = await getJson('/api/config');
  assert.deepEqual(config.logs, { file: false, backlog_lines: 1000, retention_days: 14 });
  assert.equal(config.rate_limit_per_second, 7);
  assert.deepEqual(config.cors_origins, ['https://app.example']);
});

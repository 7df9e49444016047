import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestKernel, type TestKernel } from '@talon/testing';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
let k: TestKernel;

before(async () => {
  k = await startTestKernel({
    only: ['error-envelope', 'request-id', 'security-headers', 'envelope-probe'],
    config: `module_paths = [${JSON.stringify(fixtures)}]\nmax_request_body_bytes = 1024\nlog_level = "error"\n`,
  });
});
after(() => k?.stop());

async function expectError(res: Response, status: number, message: string | RegExp): Promise<Record<string, unknown>> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.equal(typeof body.error, 'string');
  if (typeof message === 'string') assert.equal(body.error, message);
  else assert.match(body.error as string, message);
  // Cross-cutting headers survive the error path.
  assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.equal(res.headers.get('x-frame-options'), 'DENY');
  return body;
}

test('unknown route: 404 naming method and path (without the query)', async () => {
  await expectError(await k.request('/x?y=1'), 404, 'no route GET /x');
  await expectError(await k.request('/api/nothing', { method: 'DELETE' }), 404, 'no route DELETE /api/nothing');
});

test("a property's x-error replaces the generic validation message (what is allowed); others keep Ajv's", async () => {
  const put = (json: unknown) => k.request('/probe/budget', { method: 'PUT', json });
  for (const usd of [1e308, -1, 'ten']) await expectError(await put({ usd }), 400, "invalid value for 'body/usd': a number of USD from 0 to 1000");
  await expectError(await put({ note: 5 }), 400, 'body/note must be string');
  await expectError(await put({ colour: 'red' }), 400, "body has an unknown property 'colour'");
  assert.deepEqual(await (await put({ usd: 12.5 })).json(), { usd: 12.5 });
});

test('malformed JSON: 400 saying so', async () => {
  const res = await k.request('/probe/named', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name": ' });
  await expectError(res, 400, /^malformed JSON body/);
});

test('a JSON body nested deeper than 64 levels is a 400 naming the limit, before validation', async () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  for (const depth of [65, 500]) {
    const res = await k.request('/probe/named', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"name": ${nested(depth - 1)}}` });
    await expectError(res, 400, 'JSON body nests deeper than 64 levels');
  }
  // Brackets inside strings do not count, escaped quotes included.
  for (const name of ['[[[[{{{{'.repeat(100), `"${'['.repeat(70)}\\`]) {
    const ok = await k.request('/probe/named', { method: 'POST', json: { name } });
    assert.equal(ok.status, 200, await ok.text());
  }
  const shallow = await k.request('/probe/named', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"name": ${nested(63)}}` });
  await expectError(shallow, 400, 'body/name must be string');
});

test('TOML, NDJSON and every text type arrive as strings; every +json type is JSON; parameters do not matter', async () => {
  for (const type of ['application/toml', 'application/x-ndjson', 'text/markdown', 'text/markdown; charset=utf-8', 'text/plain; charset=utf-8']) {
    const res = await k.request('/probe/raw', { method: 'POST', headers: { 'content-type': type }, body: 'a = 1\n' });
    assert.equal(res.status, 200, type);
    assert.deepEqual(await res.json(), { type: 'string', body: 'a = 1\n' }, type);
  }
  for (const type of ['application/json; charset=utf-8', 'application/merge-patch+json', 'application/merge-patch+json; charset=utf-8']) {
    const res = await k.request('/probe/raw', { method: 'POST', headers: { 'content-type': type }, body: '{"a": 1}' });
    assert.deepEqual(await res.json(), { type: 'object', body: { a: 1 } }, type);
  }
  const bad = await k.request('/probe/raw', { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"a": ' });
  await expectError(bad, 400, /^malformed JSON body/);
});

test('schema violations: 400 naming the field', async () => {
  await expectError(await k.request('/probe/named', { method: 'POST', json: {} }), 400, "body must have required property 'name'");
  await expectError(await k.request('/probe/named', { method: 'POST', json: { name: 5 } }), 400, 'body/name must be string');
  await expectError(await k.request('/probe/named', { method: 'POST', json: [1] }), 400, 'body must be object');
  await expectError(await k.request('/probe/count?n=abc'), 400, 'querystring/n must be integer');
});

test('valid requests pass untouched', async () => {
  const res = await k.request('/probe/named', { method: 'POST', json: { name: 'ada' } });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { hello: 'ada' });
  assert.deepEqual(await (await k.request('/probe/count?n=3')).json(), { n: 3 });
});

test('an empty body with content-type application/json is no body', async () => {
  const res = await k.request('/probe/optional', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { body: {} });
  const none = await k.request('/probe/optional', { method: 'POST' });
  assert.equal(none.status, 200);
});

test('body over max_request_body_bytes: 413', async () => {
  const res = await k.request('/probe/named', { method: 'POST', json: { name: 'x'.repeat(2000) } });
  await expectError(res, 413, 'request body is larger than 1024 bytes');
});

test('unsupported media type: 415', async () => {
  const res = await k.request('/probe/named', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<name>ada</name>' });
  await expectError(res, 415, "unsupported media type 'application/xml': send application/json");
});

test('an unexpected failure: 500 without internals, the error in the log', async () => {
  const res = await k.request('/probe/crash');
  const body = await expectError(res, 500, 'internal server error');
  assert.deepEqual(Object.keys(body), ['error']);
  const lines = k.logLines();
  const logged = lines.map((l) => JSON.parse(l) as { msg?: string; reqId?: string; err?: { message?: string } }).find((l) => l.msg === 'request failed');
  assert.ok(logged, lines.join('\n'));
  assert.match(logged.err?.message ?? '', /SQLITE_CORRUPT/);
  assert.equal(logged.reqId, res.headers.get('x-request-id'));
});

test('HttpError: its status, headers and extra fields are kept', async () => {
  const body = await expectError(await k.request('/probe/conflict'), 409, 'probe already exists');
  assert.equal(body.probe_id, 'p1');
  const unavailable = await k.request('/probe/unavailable');
  assert.equal(unavailable.headers.get('retry-after'), '5');
  await expectError(unavailable, 503, 'probe backend is warming up');
});

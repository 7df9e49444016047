import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validate, compileErrors } from '@readme/openapi-parser';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { openApiPath } from '../services/openapi.ts';

interface Doc {
  openapi: string;
  info: { version: string };
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        tags: string[];
        security?: unknown[];
        parameters?: Array<{ name: string; in: string; required: boolean; schema: Record<string, unknown> }>;
        requestBody?: { required: boolean; content: Record<string, { schema: Record<string, unknown> }> };
        responses: Record<string, unknown>;
      }
    >
  >;
}

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
// A module written during the test, to change it and hot-reload it.
const live = mkdtempSync(path.join(tmpdir(), 'talon-openapi-live-'));
const liveModule = path.join(live, 'openapi-live');
const writeLive = (route: string) => {
  mkdirSync(liveModule, { recursive: true });
  writeFileSync(path.join(liveModule, 'module.toml'), 'name = "openapi-live"\nversion = "0.1.0"\n');
  writeFileSync(
    path.join(liveModule, 'index.ts'),
    `import { defineModule } from '@talon/module-sdk';\nexport default defineModule({ register: () => ({ routes(app) { app.get('${route}', async () => ({ ok: true })); } }) });\n`,
  );
};

let k: TestKernel;
before(async () => {
  writeLive('/live/before');
  k = await startTestKernel({
    only: ['system', 'dashboard', 'auth', 'cors', 'config-api', 'metrics', 'logs', 'security', 'error-envelope', 'openapi-probe', 'openapi-live'],
    config: `api_key = "test-key-0123456789"\nmodule_paths = [${JSON.stringify(fixtures)}, ${JSON.stringify(live)}]\n`,
  });
});
after(async () => {
  await k?.stop();
  rmSync(live, { recursive: true, force: true });
});

async function fetchDoc(): Promise<Doc> {
  const res = await k.request('/api/openapi.json', { headers: { authorization: 'Bearer test-key-0123456789' } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  return (await res.json()) as Doc;
}

test('Fastify paths become OpenAPI paths', () => {
  assert.deepEqual(openApiPath('/api/agents/:id'), { path: '/api/agents/{id}', params: [{ name: 'id', key: 'id' }] });
  assert.deepEqual(openApiPath('/a/:x/b/:y'), {
    path: '/a/{x}/b/{y}',
    params: [
      { name: 'x', key: 'x' },
      { name: 'y', key: 'y' },
    ],
  });
  assert.deepEqual(openApiPath('/files/*'), { path: '/files/{wildcard}', params: [{ name: 'wildcard', key: '*' }] });
  assert.deepEqual(openApiPath('/n/:id(^\\d+)'), { path: '/n/{id}', params: [{ name: 'id', key: 'id' }] });
  assert.deepEqual(openApiPath('/plain'), { path: '/plain', params: [] });
});

test('the document is valid OpenAPI 3.1', async () => {
  const doc = await fetchDoc();
  assert.equal(doc.openapi, '3.1.0');
  const result = await validate(structuredClone(doc) as never);
  assert.ok(result.valid, result.valid ? '' : compileErrors(result));
});

test('it lists every route with its parameters, body, responses and security', async () => {
  const doc = await fetchDoc();
  for (const p of [
    '/api/health',
    '/api/health/detail',
    '/api/status',
    '/api/openapi.json',
    '/api/config/set',
    '/api/metrics',
    '/api/logs/stream',
    '/api/security',
    '/',
  ]) {
    assert.ok(doc.paths[p], `missing ${p}`);
  }
  assert.deepEqual(doc.paths['/api/health'].get.security, [], 'public');
  assert.deepEqual(doc.paths['/'].get.security, [], 'public');
  assert.equal(doc.paths['/api/status'].get.security, undefined, 'bearer, the global default');

  const item = doc.paths['/probe/items/{id}'].get;
  assert.deepEqual(item.parameters, [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }]);
  assert.ok(item.responses['200']);
  assert.ok(item.responses['4XX']);
  const list = doc.paths['/probe/items'].get;
  assert.deepEqual(list.tags, ['probe']);
  assert.deepEqual(
    list.parameters?.map((p) => [p.name, p.in, p.required]),
    [
      ['limit', 'query', false],
      ['q', 'query', true],
    ],
  );
  const create = doc.paths['/probe/items'].post;
  assert.equal(create.requestBody?.required, true);
  assert.deepEqual(create.requestBody?.content['application/json'].schema.required, ['name']);
  assert.ok(create.responses['201']);
  assert.deepEqual(
    doc.paths['/probe/items/{id}/tags/{tag}'].delete.parameters?.map((p) => p.name),
    ['id', 'tag'],
  );
  assert.deepEqual(
    doc.paths['/probe/files/{wildcard}'].get.parameters?.map((p) => p.name),
    ['wildcard'],
  );
  assert.equal(doc.paths['/probe/hidden'], undefined, 'hidden routes stay out');
  assert.equal(doc.paths['/{wildcard}'], undefined, "the CORS plugin's catch-all OPTIONS route stays out");
  const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
  assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
});

test('after a hot reload the document follows the new routes', async () => {
  assert.ok((await fetchDoc()).paths['/live/before']);
  writeLive('/live/after');
  const result = await k.kernel.reloadModule('openapi-live');
  assert.ok(result.ok, result.error);
  const doc = await fetchDoc();
  assert.ok(doc.paths['/live/after']);
  assert.equal(doc.paths['/live/before'], undefined);
});

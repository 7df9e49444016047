/**
 * The sweep of issue 23: with api_key set, every route of every module answers 401 without credentials, except the
 * routes docs/security.md lists as public (with the reason). A new public route fails here until it is documented;
 * a documented route that no longer answers without the key fails too.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

const root = path.resolve(import.meta.dirname, '../../..');
const KEY = 'sweep-key-0123456789abcdef';
const SOME_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
let k: TestKernel;

/** `METHOD /path` of every row of the table under "What answers without the key", `{param}` as written. */
function documentedPublicRoutes(): Set<string> {
  const doc = readFileSync(path.join(root, 'docs/security.md'), 'utf8');
  const section = doc.split('## What answers without the key')[1].split('\n## ')[0];
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));
  const routes = rows.flatMap((row) => [...row.split(' | ')[0].matchAll(/`(GET|POST|PUT|PATCH|DELETE) ([^`]+)`/g)].map((m) => `${m[1]} ${m[2]}`));
  assert.ok(routes.length >= 10, 'the table of public routes was not found in docs/security.md');
  return new Set(routes);
}

before(async () => {
  // Every module, those off by default too: a route nobody switched on is still a route someone will switch on.
  const only = readdirSync(path.join(root, 'modules'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  k = await startTestKernel({ only, config: `api_key = "${KEY}"\nrate_limit_per_second = 1000000\n` });
});
after(() => k?.stop());

test('with api_key set, every route answers 401 without credentials unless docs/security.md says why it is public', async () => {
  const documented = documentedPublicRoutes();
  const routes = k.kernel.routes().filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS');
  assert.ok(routes.length > 300, `only ${routes.length} routes were swept`);
  const unexplained: string[] = [];
  const stale = new Set(documented);
  for (const route of routes) {
    const written = route.url.replace(/:(\w+)/g, '{$1}');
    const url = route.url.replace(/:\w+/g, SOME_ID).replace(/\*/g, 'x');
    const withBody = route.method !== 'GET' && route.method !== 'DELETE';
    const res = await k.request(url, { method: route.method, ...(withBody ? { json: {} } : {}) });
    await res.body?.cancel();
    const name = `${route.method} ${written}`;
    if (res.status !== 401 && !documented.has(name)) unexplained.push(`${name} (${route.module}) answered ${res.status}`);
    if (res.status !== 401) stale.delete(name);
  }
  assert.deepEqual(unexplained, [], 'routes that answer without the key but are not explained in docs/security.md');
  assert.deepEqual([...stale], [], 'routes docs/security.md calls public that answered 401 (or do not exist)');
});

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';

// Every module's routes, so the guard is checked on each route that names an agent, whoever serves it.
let k: TestKernel;
before(async () => {
  k = await startTestKernel({ config: 'rate_limit_per_second = 100000\n' });
});
after(() => k.stop());

const agentRoutes = () => k.kernel.routes().filter((r) => /^\/api\/(memory\/)?agents\/:id(\/|$)/.test(r.url));

/** A concrete path for a route pattern, with the agent id given and placeholder values for the other parameters. */
const pathFor = (url: string, id: string) =>
  url
    .replace(':id', id)
    .replace(/:[a-z_]+/g, (p) => (p === ':session_id' ? '6f1b1f4e-2c1a-4c3e-9c39-6d1c2a7d9e10' : 'x'))
    .replace('*', 'x');

test('every route that names an agent answers 404 naming an unknown agent, and 400 for an id that is not a UUID', async () => {
  const routes = agentRoutes();
  assert.ok(routes.length > 40, `found ${routes.length} agent routes`);
  assert.ok(routes.some((r) => r.url.startsWith('/api/memory/agents/')));
  const unknown = '9b2d6c0e-4c4f-4e41-8f3c-1b2a3c4d5e6f';
  for (const route of routes) {
    const init = { method: route.method, ...(['POST', 'PUT', 'PATCH'].includes(route.method) ? { json: {} } : {}) };
    const missing = await k.request(pathFor(route.url, unknown), init);
    assert.equal(missing.status, 404, `${route.method} ${route.url}`);
    assert.deepEqual(await missing.json(), { error: `Agent '${unknown}' not found` }, `${route.method} ${route.url}`);
    const bad = await k.request(pathFor(route.url, 'not-a-uuid'), init);
    assert.equal(bad.status, 400, `${route.method} ${route.url}`);
    assert.deepEqual(await bad.json(), { error: "invalid agent id: 'not-a-uuid' is not a UUID" }, `${route.method} ${route.url}`);
  }
});

test('an existing agent passes the guard (also written in upper case)', async () => {
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "guarded"\n' } });
  const { agent_id } = (await res.json()) as { agent_id: string };
  assert.equal((await k.request(`/api/memory/agents/${agent_id}/kv`)).status, 200);
  assert.equal((await k.request(`/api/agents/${agent_id.toUpperCase()}`)).status, 200);
});

test('a body nested 10,000 levels deep is a 400 naming the limit on the routes that answered 500 (issue 10 item 4)', async () => {
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "deep"\n' } });
  const { agent_id } = (await res.json()) as { agent_id: string };
  const deep = `{"value": ${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
  for (const [method, path] of [
    ['PATCH', `/api/agents/${agent_id}/config`],
    ['POST', `/api/agents/${agent_id}/memory/import`],
    ['PUT', `/api/memory/agents/${agent_id}/kv/deep`],
  ]) {
    const answer = await k.request(path, { method, headers: { 'content-type': 'application/json' }, body: deep });
    assert.equal(answer.status, 400, `${method} ${path}`);
    assert.match(((await answer.json()) as { error: string }).error, /nests deeper than 64 levels/, `${method} ${path}`);
  }
});

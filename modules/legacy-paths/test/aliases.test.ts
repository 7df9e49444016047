import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
// On PostgreSQL /api/restart answers 409 (test/fleet-reload.test.ts).
const sqliteOnly = { skip: process.env.TALON_TEST_DB === 'postgres' && 'no in-process restart on PostgreSQL' };

const KEY = 'legacy-test-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };
let k: AgentTestKernel;
let agent: string;

before(async () => {
  k = await startAgentTestKernel({
    only: ['legacy-paths', 'auth', 'agents', 'memory', 'usage', 'triggers', 'skills', 'mcp', 'a2a', 'config-api', 'error-envelope'],
    config: `api_key = "${KEY}"`,
  });
  const res = await call('/api/agents', 'POST', { manifest_toml: 'name = "legacy"\n[model]\nprovider = "default"\nmodel = "default"\n' });
  agent = (res.body as { agent_id: string }).agent_id;
});
after(async () => {
  await k?.stop();
});

async function call(path: string, method = 'GET', json?: unknown, headers: Record<string, string> = auth): Promise<{ status: number; body: unknown }> {
  const res = await k.request(path, { method, json, headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body };
}

/** Alias and target answer alike (status and body). */
async function same(alias: [string, string, unknown?], target: [string, string, unknown?]): Promise<{ status: number; body: unknown }> {
  const a = await call(alias[1], alias[0], alias[2]);
  const t = await call(target[1], target[0], target[2]);
  assert.equal(a.status, t.status, `${alias.join(' ')}: ${JSON.stringify(a.body)}`);
  assert.deepEqual(a.body, t.body);
  return a;
}

test('aliases keep the bearer rule: without the key they answer 401', async () => {
  assert.equal((await call('/api/usage/agents', 'GET', undefined, {})).status, 401);
  assert.equal((await call('/api/mcp/tools', 'GET', undefined, {})).status, 401);
});

test('GET /api/agents/{id}/stream is the attach stream', async () => {
  const ctrl = new AbortController();
  const res = await k.request(`/api/agents/${agent}/stream`, { headers: auth, signal: ctrl.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  ctrl.abort();
  assert.equal((await call(`/api/agents/${crypto.randomUUID()}/stream`)).status, 404);
});

test('PUT /api/triggers/{id} is PATCH', async () => {
  const made = await call('/api/triggers', 'POST', { agent_id: agent, pattern: 'task_posted', prompt_template: 'saw {{event}}' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = (made.body as { trigger_id: string }).trigger_id;
  const put = await call(`/api/triggers/${id}`, 'PUT', { enabled: false });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.equal(((await call(`/api/triggers/${id}`)).body as { enabled: boolean }).enabled, false);
  assert.equal((await call(`/api/triggers/${crypto.randomUUID()}`, 'PUT', { enabled: true })).status, 404);
});

test('DELETE /api/memory/{id} deletes the item', async () => {
  const made = await call('/api/memory', 'POST', { content: 'to forget', agent_id: agent });
  const id = (made.body as { id: string }).id;
  assert.equal((await call(`/api/memory/${id}`, 'DELETE')).status, 200);
  assert.equal((await call(`/api/memory/items/${id}`, 'DELETE')).status, 404);
});

test('GET /api/memory/sessions and /api/usage/agents answer as /api/sessions and /api/budget/agents', async () => {
  await same(['GET', '/api/memory/sessions?limit=5'], ['GET', '/api/sessions?limit=5']);
  await same(['GET', '/api/usage/agents'], ['GET', '/api/budget/agents']);
});

test('DELETE /api/skills/{id} uninstalls', async () => {
  const gone = await call('/api/skills/no-such-skill', 'DELETE');
  const direct = await call('/api/skills/uninstall', 'POST', { name: 'no-such-skill' });
  assert.equal(gone.status, direct.status);
  assert.deepEqual(gone.body, direct.body);
});

test('GET /api/mcp/tools lists the tools of the MCP servers', async () => {
  assert.deepEqual((await call('/api/mcp/tools')).body, { tools: [], total: 0 });
});

test('POST /a2a/tasks is tasks/send', async () => {
  k.fake.enqueue({ text: 'a2a reply' });
  const res = await call('/a2a/tasks', 'POST', { agent_id: agent, message: { role: 'user', parts: [{ type: 'text', text: 'hi' }] } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.match(JSON.stringify(res.body), /a2a reply/);
  await same(['POST', '/a2a/tasks', {}], ['POST', '/a2a/tasks/send', {}]);
});

test('GET and PUT /api/config/provider', async () => {
  assert.deepEqual(((await call('/api/config/provider')).body as { provider: string }).provider, 'openai');
  const put = await call('/api/config/provider', 'PUT', { provider: 'anthropic', model: 'claude-x' });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const now = (await call('/api/config/provider')).body as { provider: string; model: string };
  assert.deepEqual([now.provider, now.model], ['anthropic', 'claude-x']);
  assert.equal((await call('/api/config/provider', 'PUT', {})).status, 400);
});

test('POST /api/restart restarts every module but the security ones, in-process', sqliteOnly, async () => {
  const before = k.kernel.reloadCount();
  const res = await call('/api/restart', 'POST');
  assert.equal(res.status, 202);
  const { modules } = res.body as { modules: string[] };
  assert.ok(modules.includes('agents') && !modules.includes('auth'));
  await waitFor(() => k.kernel.reloadCount() >= before + modules.length, 20_000, 'restarts');
  assert.equal((await call('/api/agents')).status, 200);
});

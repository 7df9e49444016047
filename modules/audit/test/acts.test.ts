/**
 * The acts the trail must hold besides spawns, turns and kills (audit.test.ts): direct tool calls, configuration
 * reloads, provider keys, module lifecycle and failures, refused model calls, approvals, skill, hand and MCP server
 * changes, and the shutdown — each recorded with its documented event_type.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const MANIFEST = (name: string) => `name = "${name}"\n[model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n`;

let k: AgentTestKernel;

interface Entry {
  id: number;
  event_type: string;
  agent_id: string | null;
  details: string;
  outcome: string;
}

before(async () => {
  const config = [
    `module_paths = [${JSON.stringify(FIXTURES)}]`,
    '[audit]',
    'module_poll_ms = 500',
    '[tools.invoke]',
    'enabled = true',
    'allowlist = ["file_list"]',
  ].join('\n');
  const only = ['audit', 'agents', 'tools', 'catalog', 'usage', 'config-api', 'approvals', 'skills', 'hands', 'mcp', 'error-envelope'];
  k = await startAgentTestKernel({ only: [...only, 'audit-probe', 'audit-boom'], model: 'gpt-4o-mini', config, keepHome: true });
});
after(async () => {
  await k?.stop();
  if (k) rmSync(k.home, { recursive: true, force: true });
});

const call = async <T = Record<string, unknown>>(p: string, init: RequestInit & { json?: unknown } = {}): Promise<{ status: number; body: T }> => {
  const res = await k.request(p, init);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
};
const ofType = async (type: string) => (await call<{ entries: Entry[] }>(`/api/audit/recent?limit=500&event_type=${type}`)).body.entries;
/** Waits for an entry of the type and answers the newest one. */
const entry = async (type: string): Promise<Entry> => (await waitFor(async () => (await ofType(type))[0], 5000, `an ${type} entry`))!;
const details = (e: Entry) => JSON.parse(e.details) as Record<string, unknown>;

test('a direct tool invocation and a configuration reload', async () => {
  const invoked = await call('/api/tools/file_list/invoke', { method: 'POST', json: { path: '.' } });
  assert.equal(invoked.status, 200, JSON.stringify(invoked.body));
  const tool = await entry('tool_invoked');
  assert.deepEqual([details(tool).tool, details(tool).direct, tool.outcome], ['file_list', true, 'ok']);
  assert.equal((await call('/api/config/reload', { method: 'POST' })).status, 200);
  assert.ok(Array.isArray(details(await entry('config_reloaded')).keys));
});

test('a provider key set and removed: recorded, the key never', async () => {
  const secret = 'sk-ant-never-in-the-trail-0123';
  assert.equal((await call('/api/providers/anthropic/key', { method: 'POST', json: { api_key: secret } })).status, 200);
  assert.equal((await call('/api/providers/anthropic/key', { method: 'DELETE' })).status, 200);
  const [set, removed] = [await entry('provider_key_set'), await entry('provider_key_removed')];
  assert.equal(details(set).url, '/api/providers/anthropic/key');
  assert.ok(removed.id > set.id);
  const all = await call<{ entries: Entry[] }>('/api/audit/recent?limit=500');
  assert.ok(!JSON.stringify(all.body).includes(secret));
});

test('modules: a start-up failure, a reload and an unload', async () => {
  const failed = await entry('module_failed');
  assert.deepEqual([details(failed).module, failed.outcome], ['audit-boom', 'failed']);
  assert.match(String(details(failed).error), /audit-boom refuses to start/);
  assert.equal((await k.kernel.reloadModule('audit-probe')).ok, true);
  assert.equal(details(await entry('module_reloaded')).module, 'audit-probe');
  await k.kernel.removeModule('audit-probe');
  assert.equal(details(await entry('module_unloaded')).module, 'audit-probe');
});

test('a model call refused by the budget: budget_exceeded, whether or not an HTTP answer says 402', async () => {
  const agent = (await call<{ agent_id: string }>('/api/agents', { method: 'POST', json: { manifest_toml: MANIFEST('spender') } })).body.agent_id;
  k.fake.enqueue({ text: 'spent', usage: { input: 1_000_000, output: 0 } });
  assert.equal((await call(`/api/agents/${agent}/message`, { method: 'POST', json: { message: 'spend' } })).status, 200);
  assert.equal((await call('/api/budget', { method: 'PUT', json: { daily_limit_usd: 0.1 } })).status, 200);
  assert.equal((await call(`/api/agents/${agent}/message`, { method: 'POST', json: { message: 'more' } })).status, 402);
  const refused = await entry('budget_exceeded');
  assert.deepEqual([refused.agent_id, refused.outcome, details(refused).status], [agent, 'denied', 402]);
  assert.match(String(details(refused).error), /daily budget exceeded/);
  assert.equal(details(refused).kind, 'llm');
  assert.equal((await ofType('budget_exceeded')).length, 1, 'one entry per refusal');
  assert.equal((await call('/api/budget', { method: 'PUT', json: { daily_limit_usd: 0 } })).status, 200);
});

test('an approval requested and decided', async () => {
  const agent = (await call<{ agent_id: string }>('/api/agents', { method: 'POST', json: { manifest_toml: MANIFEST('asker') } })).body.agent_id;
  const created = await call<{ id: string }>('/api/approvals', {
    method: 'POST',
    json: { agent_id: agent, action: 'deploy', description: 'ship it', payload: {} },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal((await call(`/api/approvals/${created.body.id}/approve`, { method: 'POST', json: {} })).status, 200);
  const requested = await entry('approval_requested');
  assert.deepEqual([requested.agent_id, requested.outcome], [agent, 'pending']);
  assert.equal((await entry('approval_decided')).outcome, 'approved');
});

test('skills, hands and MCP servers: installs, uninstalls and changes', async () => {
  const src = path.join(k.home, 'src-skill', 'audited-skill');
  mkdirSync(src, { recursive: true });
  writeFileSync(path.join(src, 'SKILL.md'), '---\nname: audited-skill\ndescription: helps the audit test\nversion: 1.0.0\n---\nBe brief.\n');
  assert.equal((await call('/api/skills/install', { method: 'POST', json: { source: src } })).status, 201);
  assert.equal((await call('/api/skills/uninstall', { method: 'POST', json: { name: 'audited-skill' } })).status, 200);
  assert.equal(details(await entry('skill_installed')).name, 'audited-skill');
  assert.equal(details(await entry('skill_uninstalled')).name, 'audited-skill');
  assert.equal((await call('/api/skills/create', { method: 'POST', json: { name: 'written-skill', description: 'from a request' } })).status, 200);
  await waitFor(async () => (await ofType('skill_installed')).length === 2, 5000, 'the created skill');

  const hand = 'id = "audited-hand"\nname = "Audited"\ndescription = "x"\ncategory = "development"\n[agent]\nsystem_prompt = "hi"\n';
  const installed = await call('/api/hands/install', { method: 'POST', json: { toml_content: hand } });
  assert.equal(installed.status, 201, JSON.stringify(installed.body));
  assert.equal((await call('/api/hands/audited-hand', { method: 'DELETE' })).status, 200);
  await entry('hand_installed');
  assert.equal(details(await entry('hand_uninstalled')).url, '/api/hands/audited-hand');

  const server = { name: 'audited', transport: { type: 'stdio', command: process.execPath, args: ['-e', ''] } };
  const added = await call('/api/mcp/servers', { method: 'POST', json: server });
  assert.ok(added.status < 300, JSON.stringify(added.body));
  assert.equal((await call('/api/mcp/servers/audited', { method: 'DELETE' })).status, 200);
  await waitFor(async () => (await ofType('mcp_server_changed')).length === 2, 5000, 'add and remove');
});

test('the shutdown is written before the trail closes, without an entry for each module it stops', async () => {
  // The kernel alone: its database stays (k.stop() in after() drops a PostgreSQL one), read without the kernel's store.
  await k.kernel.stop('test');
  const types = await storedTypes('SELECT event_type FROM audit_entries ORDER BY id');
  const at = types.lastIndexOf('shutdown');
  assert.ok(at > 0, 'a shutdown entry');
  assert.deepEqual(
    types.slice(at + 1).filter((t) => t.startsWith('module_')),
    [],
  );
});

/** The event types a query of the stopped kernel's database gives: its PostgreSQL database, else the home's file. */
async function storedTypes(sql: string): Promise<string[]> {
  if (k.databaseUrl) {
    const client = new pg.Client({ connectionString: k.databaseUrl });
    await client.connect();
    try {
      return (await client.query<{ event_type: string }>(sql)).rows.map((r) => r.event_type);
    } finally {
      await client.end();
    }
  }
  const db = new Database(path.join(k.home, 'talon.db'), { readonly: true });
  try {
    return (db.prepare(sql).all() as Array<{ event_type: string }>).map((r) => r.event_type);
  } finally {
    db.close();
  }
}

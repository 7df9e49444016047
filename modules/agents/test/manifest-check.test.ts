/**
 * The names a manifest uses are checked at spawn (and at every other way to a manifest: clone, PATCH manifest_toml,
 * POST /api/agents/validate): an unknown provider, model, tool, skill or MCP server is a 400 naming it, a taken name
 * a 409. The kernel has the modules that own those names: catalog, tools, skills and mcp (with one configured
 * server that never connects, so its tools are not known yet).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, type AgentTestKernel } from '@talon/testing';
import { json } from './helpers.ts';

interface Refusal {
  error: string;
  problems?: { field: string; message: string }[];
}

const OFFLINE_SERVER = `[[mcp_servers]]\nname = "offline"\n[mcp_servers.transport]\ntype = "stdio"\ncommand = "/nonexistent/talon-test-mcp"\n`;

function manifest(name: string, { model = '', tools = '[]', top = '' } = {}): string {
  return `name = "${name}"\n${top}\n[model]\n${model || 'provider = "default"\nmodel = "default"'}\n\n[capabilities]\ntools = ${tools}\n`;
}

describe('agents: the names of a manifest are checked at spawn', () => {
  let k: AgentTestKernel;
  before(async () => {
    k = await startAgentTestKernel({ only: ['agents', 'error-envelope', 'tools', 'skills', 'mcp'], config: OFFLINE_SERVER });
  });
  after(() => k?.stop());

  const post = (manifest_toml: string) => k.request('/api/agents', { method: 'POST', json: { manifest_toml } });
  async function refused(manifest_toml: string, field: string, named: RegExp): Promise<void> {
    const res = await post(manifest_toml);
    const body = await json<Refusal>(res);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match(body.error, named);
    assert.ok(
      body.problems?.some((p) => p.field === field && named.test(p.message)),
      `problem on ${field}: ${JSON.stringify(body.problems)}`,
    );
  }
  async function spawned(manifest_toml: string): Promise<string> {
    const res = await post(manifest_toml);
    const body = await json<{ agent_id: string } & Refusal>(res);
    assert.equal(res.status, 201, body.error);
    return body.agent_id;
  }

  test('an unknown provider is refused; a catalogued one, the default and a custom one with base_url spawn', async () => {
    await refused(manifest('p1', { model: 'provider = "nosuchai"\nmodel = "m"' }), 'model.provider', /unknown provider 'nosuchai'/);
    await spawned(manifest('p2', { model: 'provider = "openai"\nmodel = "gpt-5"' }));
    await spawned(manifest('p3'));
    await spawned(manifest('p4', { model: 'provider = "mine"\nmodel = "anything"\nbase_url = "http://127.0.0.1:9/v1"' }));
  });

  test("an unknown model of a catalogued provider is refused; a local runtime's names are not checked", async () => {
    await refused(manifest('m1', { model: 'provider = "openai"\nmodel = "gpt-nope"' }), 'model.model', /unknown model 'gpt-nope'/);
    await spawned(manifest('m2', { model: 'provider = "ollama"\nmodel = "whatever-i-pulled:7b"' }));
  });

  test('an unknown tool is refused by name; known tools and * spawn', async () => {
    await refused(manifest('t1', { tools: '["file_read", "no_such_tool"]' }), 'capabilities.tools', /unknown tool 'no_such_tool'/);
    await spawned(manifest('t2', { tools: '["file_read", "file_write"]' }));
    await spawned(manifest('t3', { tools: '["*"]' }));
  });

  test('an unknown skill is refused; an installed one spawns', async () => {
    await refused(manifest('s1', { top: 'skills = ["git-workflow", "no-such-skill"]' }), 'skills', /unknown skill 'no-such-skill'/);
    await spawned(manifest('s2', { top: 'skills = ["git-workflow"]' }));
  });

  test("MCP: an unknown server is refused; a configured one's tools are vouched for until it connects", async () => {
    await refused(manifest('x1', { top: 'mcp_servers = ["nowhere"]' }), 'mcp_servers', /unknown MCP server 'nowhere'/);
    await spawned(manifest('x2', { top: 'mcp_servers = ["offline"]', tools: '["mcp_offline_search"]' }));
    await refused(manifest('x3', { tools: '["mcp_nowhere_search"]' }), 'capabilities.tools', /unknown tool 'mcp_nowhere_search'/);
  });

  test('every problem is listed, each on its field', async () => {
    const res = await post(manifest('many', { model: 'provider = "nosuchai"\nmodel = "m"', tools: '["nope"]', top: 'skills = ["nada"]' }));
    assert.equal(res.status, 400);
    const { problems } = await json<Refusal>(res);
    assert.deepEqual(problems?.map((p) => p.field).sort(), ['capabilities.tools', 'model.provider', 'skills']);
  });

  test('a taken name is refused with 409, whatever its case', async () => {
    await spawned(manifest('taken'));
    const res = await post(manifest('TAKEN'));
    assert.equal(res.status, 409);
    assert.match((await json<Refusal>(res)).error, /an agent named 'TAKEN' already exists/);
  });

  test('PATCH manifest_toml is checked the same way; the agent is left as it was', async () => {
    const id = await spawned(manifest('patched', { tools: '["file_read"]' }));
    const res = await k.request(`/api/agents/${id}`, { method: 'PATCH', json: { manifest_toml: manifest('patched', { tools: '["bogus_tool"]' }) } });
    assert.equal(res.status, 400);
    assert.match((await json<Refusal>(res)).error, /unknown tool 'bogus_tool'/);
    const detail = await json<{ capabilities: { tools: string[] } }>(await k.request(`/api/agents/${id}`));
    assert.deepEqual(detail.capabilities.tools, ['file_read']);
  });

  test('clone still spawns (its manifest is checked and valid)', async () => {
    const id = await spawned(manifest('original', { tools: '["file_read"]', top: 'skills = ["git-workflow"]' }));
    assert.equal((await k.request(`/api/agents/${id}/clone`, { method: 'POST' })).status, 201);
  });

  test('POST /api/agents/validate answers the problems by field and spawns nothing', async () => {
    const before = (await json<unknown[]>(await k.request('/api/agents'))).length;
    const check = async (manifest_toml: string, agent_id?: string) => {
      const res = await k.request('/api/agents/validate', { method: 'POST', json: { manifest_toml, ...(agent_id && { agent_id }) } });
      assert.equal(res.status, 200);
      return json<{ valid: boolean; problems: { field: string; message: string }[] }>(res);
    };
    assert.deepEqual(await check(manifest('fresh', { tools: '["file_read"]' })), { valid: true, problems: [] });
    const bad = await check(manifest('taken', { tools: '["nope"]' }));
    assert.equal(bad.valid, false);
    assert.deepEqual(
      bad.problems.map((p) => p.field),
      ['name', 'capabilities.tools'],
    );
    const syntax = await check('name = ');
    assert.equal(syntax.valid, false);
    assert.equal(syntax.problems[0]!.field, 'manifest');
    const keyed = await check('name = "k"\n[model]\nmax_tokens = -1');
    assert.equal(keyed.problems[0]!.field, 'model.max_tokens');
    // An agent's own name is no clash when its manifest is being edited.
    const own = (await json<{ id: string; name: string }[]>(await k.request('/api/agents'))).find((a) => a.name === 'taken')!;
    assert.deepEqual(await check(manifest('taken'), own.id), { valid: true, problems: [] });
    assert.equal((await json<unknown[]>(await k.request('/api/agents'))).length, before);
    assert.equal((await k.request('/api/agents/validate', { method: 'POST', json: {} })).status, 400);
  });
});

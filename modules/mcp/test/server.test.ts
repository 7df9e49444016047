/** The service as MCP server: the official SDK client over Streamable HTTP, the spec's plain JSON-RPC shape, scoping, gating. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { addFixture, json, spawnAgent, startEnv, stopEnv, type Env } from './helpers.ts';

type Content = Array<{ type: string; text: string }>;

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'talon-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

describe('MCP server: official client and JSON-RPC shapes', () => {
  let env: Env;
  let agentId: string;
  before(async () => {
    env = await startEnv('[tool_invoke]\nenabled = true\nallowlist = ["agent_list", "file_*"]');
    // The server first: an agent may name only a configured MCP server.
    await addFixture(env.k);
    agentId = await spawnAgent(env.k, 'helper', 'mcp_servers = ["fixture"]', '["file_write", "file_read"]');
  });
  after(() => stopEnv(env));

  for (const path of ['/mcp', '/api/mcp']) {
    it(`the official client initialises, lists and calls on ${path}`, async () => {
      const client = await connect(env.k.url + path);
      assert.equal(client.getServerVersion()?.name, 'talon');
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      assert.ok(names.includes('ask_agent_helper'), names.join());
      assert.ok(names.includes('agent_list') && names.includes('file_read'), 'tools permitted by [tool_invoke] are offered');
      assert.ok(!names.includes('shell_exec'), 'a tool outside the allowlist is offered');
      const ask = tools.find((t) => t.name === 'ask_agent_helper')!;
      assert.equal(ask.inputSchema.type, 'object');
      env.fake.enqueue({ text: 'hello from the helper agent' });
      const result = await client.callTool({ name: 'ask_agent_helper', arguments: { message: 'hi' } });
      assert.equal((result.content as Content)[0].text, 'hello from the helper agent');
      assert.notEqual(result.isError, true);
      const listed = await client.callTool({ name: 'agent_list', arguments: {} });
      assert.match((listed.content as Content)[0].text, /helper/);
      await assert.rejects(client.callTool({ name: 'shell_exec', arguments: { command: 'echo hi' } }), /not offered/);
      await client.close();
    });
  }

  it('answers the spec shape: {jsonrpc, method, id} → 200 {jsonrpc, result, id}', async () => {
    const res = await env.k.request('/mcp', { method: 'POST', json: { jsonrpc: '2.0', method: 'tools/list', id: 7 } });
    assert.equal(res.status, 200);
    const body = await json<{
      jsonrpc: string;
      id: number;
      result: { tools: Array<{ name: string; description: string; inputSchema: { type: string; properties: object } }> };
    }>(res);
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, 7);
    for (const t of body.result.tools) {
      assert.equal(typeof t.description, 'string');
      assert.equal(t.inputSchema.type, 'object');
      assert.equal(typeof t.inputSchema.properties, 'object');
    }
    const init = await env.k.request('/mcp', {
      method: 'POST',
      json: {
        jsonrpc: '2.0',
        method: 'initialize',
        id: 1,
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
      },
    });
    assert.equal(init.status, 200);
    assert.deepEqual(Object.keys((await json<{ result: { capabilities: object } }>(init)).result.capabilities), ['tools']);
    const note = await env.k.request('/mcp', { method: 'POST', json: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    assert.equal(note.status, 202);
  });

  it('bad requests get JSON-RPC errors with 4xx, never 5xx', async () => {
    const cases: Array<[unknown, number]> = [
      [{}, 400],
      [[1, 2, 3], 400],
      [{ jsonrpc: '2.0', method: 'tools/call', id: 2, params: { name: 'no_such_tool', arguments: {} } }, 200],
      [{ jsonrpc: '2.0', method: 'no/such/method', id: 3 }, 200],
    ];
    for (const [body, status] of cases) {
      const res = await env.k.request('/mcp', { method: 'POST', json: body });
      assert.equal(res.status, status, JSON.stringify(body));
      const answer = await json<{ error: { code: number; message: string } }>(res);
      assert.equal(typeof answer.error.message, 'string', JSON.stringify(answer));
    }
    const malformed = await env.k.request('/mcp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    assert.equal(malformed.status, 400);
    assert.equal(typeof (await json(malformed)).error, 'string');
    const get = await env.k.request('/mcp');
    assert.equal(get.status, 405);
    assert.equal(typeof (await json(get)).error, 'string');
  });

  it('the agent header scopes tools/list and tools/call to that agent', async () => {
    const client = await connect(env.k.url + '/mcp', { 'X-Talon-Agent-Id': agentId });
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(
      names.filter((n) => !n.startsWith('mcp_')),
      ['file_read', 'file_write'],
    );
    assert.ok(names.includes('mcp_fixture_echo'), 'the agent’s MCP servers are part of its tools');
    const wrote = await client.callTool({ name: 'file_write', arguments: { path: 'note.txt', content: 'scoped' } });
    assert.notEqual(wrote.isError, true, JSON.stringify(wrote));
    const read = await client.callTool({ name: 'file_read', arguments: { path: 'note.txt' } });
    assert.match((read.content as Content)[0].text, /scoped/);
    const echo = await client.callTool({ name: 'mcp_fixture_echo', arguments: { text: 'via scope' } });
    assert.equal((echo.content as Content)[0].text, 'echo: via scope');
    await assert.rejects(client.callTool({ name: 'agent_list', arguments: {} }), /not offered/);
    await assert.rejects(client.callTool({ name: 'file_read', arguments: {} }), /path/);
    await client.close();
    const byName = await env.k.request('/mcp', {
      method: 'POST',
      headers: { 'X-Talon-Agent-Id': 'helper' },
      json: { jsonrpc: '2.0', method: 'tools/list', id: 1 },
    });
    assert.equal(byName.status, 200);
    const unknown = await env.k.request('/mcp', {
      method: 'POST',
      headers: { 'X-Talon-Agent-Id': 'nobody' },
      json: { jsonrpc: '2.0', method: 'tools/list', id: 1 },
    });
    assert.equal(unknown.status, 404);
    assert.match((await json<{ error: { message: string } }>(unknown)).error.message, /nobody/);
  });
});

describe('MCP server with an api_key: the public mount', () => {
  const KEY = 'k-0123456789abcdef-test-key';
  let env: Env;
  before(async () => {
    env = await startEnv(
      `api_key = "${KEY}"\n[mcp_server]\npublic_tools = ["agent_list"]\n[tool_invoke]\nenabled = true\nallowlist = ["agent_list", "file_list"]`,
    );
  });
  after(() => stopEnv(env));

  const bearer = { authorization: `Bearer ${KEY}` };
  const call = (name: string, headers: Record<string, string> = {}, path = '/mcp') =>
    env.k.request(path, {
      method: 'POST',
      headers,
      json: { jsonrpc: '2.0', method: 'tools/call', id: 5, params: { name, arguments: name === 'file_list' ? { path: '.' } : {} } },
    });

  it('initialize and tools/list need no credentials on /mcp; the official client connects', async () => {
    const client = await connect(env.k.url + '/mcp');
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('file_list'));
    const pub = await client.callTool({ name: 'agent_list', arguments: {} });
    assert.notEqual(pub.isError, true);
    await assert.rejects(client.callTool({ name: 'file_list', arguments: { path: '.' } }), /401|Bearer|Unauthorized/i);
    await client.close();
  });

  it('tools/call of a tool outside public_tools needs the bearer on /mcp', async () => {
    const none = await call('file_list');
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    assert.match((await json<{ error: { message: string } }>(none)).error.message, /public_tools/);
    const wrong = await call('file_list', { authorization: 'Bearer wrong-key-wrong-key' });
    assert.equal(wrong.status, 401);
    const right = await call('file_list', bearer);
    assert.equal(right.status, 200);
    assert.ok((await json<{ result: unknown }>(right)).result);
    assert.equal((await call('agent_list')).status, 200, 'a public tool runs without the bearer');
  });

  it('/api/mcp needs the bearer for everything; the official client passes it', async () => {
    const res = await env.k.request('/api/mcp', { method: 'POST', json: { jsonrpc: '2.0', method: 'tools/list', id: 1 } });
    assert.equal(res.status, 401);
    const client = await connect(env.k.url + '/api/mcp', bearer);
    const r = await client.callTool({ name: 'file_list', arguments: { path: '.' } });
    assert.notEqual(r.isError, true);
    await client.close();
  });
});

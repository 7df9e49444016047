/** /api/mcp/servers errors and updates, the catalogue (built-in, folder, install with credentials), config servers, HTTP transport, reload. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { isAlive } from '../services/process-tree.ts';
import { addFixture, json, server, spawnAgent, startEnv, STDIO_SERVER, stopEnv, waitConnected, type Env, type ServerView } from './helpers.ts';

const fixtureTemplate = (id: string) => `id = "${id}"
name = "Fixture"
description = "The test server"
category = "devtools"
tags = ["test"]

[transport]
type = "stdio"
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(STDIO_SERVER)}]

[[required_env]]
name = "FIXTURE_TOKEN"
label = "Token"
help = "any text"
is_secret = true

[health_check]
interval_secs = 60
setup_instructions = "Nothing to set up."
`;

/**
 * An MCP server over the (older) HTTP+SSE transport, built with the SDK's own SSEServerTransport, which also serves
 * catalogue templates by URL: /tpl.toml (one TOML template) and /tpls.json (a JSON array of templates).
 */
async function startSseServer(): Promise<{ url: string; close(): Promise<void> }> {
  const transports = new Map<string, SSEServerTransport>();
  const httpServer = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      const mcp = new Server({ name: 'sse-fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [{ name: 'shout', description: 'Upper-cases the text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (r) => ({ content: [{ type: 'text', text: String(r.params.arguments?.text ?? '').toUpperCase() }] }));
      void mcp.connect(transport);
    } else if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = transports.get(url.searchParams.get('sessionId') ?? '');
      if (transport) void transport.handlePostMessage(req, res);
      else res.writeHead(404).end();
    } else if (url.pathname === '/tpl.toml') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(fixtureTemplate('from-url'));
    } else if (url.pathname === '/tpls.json') {
      const base = { name: 'JSON template', description: 'from a JSON array', transport: { type: 'stdio', command: process.execPath, args: [STDIO_SERVER] } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify([
          { ...base, id: 'json-one' },
          { ...base, id: 'json-two' },
        ]),
      );
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        httpServer.closeAllConnections();
        httpServer.close(() => r());
      }),
  };
}

describe('MCP servers API and catalogue', () => {
  let env: Env;
  let dir: string;
  let sse: Awaited<ReturnType<typeof startSseServer>>;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mcp-catalog-'));
    sse = await startSseServer();
    writeFileSync(path.join(dir, 'fixture-tpl.toml'), fixtureTemplate('fixture-tpl'));
    writeFileSync(path.join(dir, 'broken.toml'), 'id = "Not Valid"\n');
    const configServer = `[[mcp_servers]]\nname = "from-config"\nenv = ["FIXTURE_TOKEN=cfg"]\n[mcp_servers.transport]\ntype = "stdio"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(STDIO_SERVER)}]\n`;
    const urls = JSON.stringify([`${sse.url}/tpl.toml`, `${sse.url}/tpls.json`]);
    env = await startEnv(`${configServer}[mcp]\ncatalog_dirs = [${JSON.stringify(dir)}]\ncatalog_urls = ${urls}\nreconnect_base_ms = 50`);
  });
  after(async () => {
    await stopEnv(env);
    await sse.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (body: unknown) => env.k.request('/api/mcp/servers', { method: 'POST', json: body });

  it('refuses bad specs with 4xx naming the problem', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{}, 400, /name/],
      [{ name: 'x' }, 400, /transport/],
      [{ name: 'x', transport: { type: 'carrier-pigeon', command: 'a' } }, 400, /transport.type/],
      [{ name: 'x', transport: { type: 'stdio' } }, 400, /command/],
      [{ name: 'x', transport: { type: 'stdio', command: '/bin/bash' } }, 400, /shell/],
      [{ name: 'x', transport: { type: 'stdio', command: '../evil' } }, 400, /\.\./],
      [{ name: 'bad name!', transport: { type: 'stdio', command: 'node' } }, 400, /name/],
      [{ name: 'x', transport: { type: 'http', url: 'ftp://x' } }, 400, /http or https/],
      [{ name: 'x', transport: { type: 'http', url: 'http://u:p@host/' } }, 400, /credentials/],
      [{ name: 'x', transport: 'stdio', command: 'node', env: { 'BAD-NAME': 'v' } }, 400, /BAD-NAME/],
      [{ template_id: 'no-such-template' }, 404, /no-such-template/],
      [{ template_id: 'fixture-tpl' }, 400, /FIXTURE_TOKEN/],
      [{ name: 'from-config', transport: { type: 'stdio', command: 'node' } }, 409, /exists/],
      [{ name: 'x', transport: { type: 'stdio', command: 'node' }, surprise: 1 }, 400, /surprise|additional/],
    ];
    for (const [body, status, pattern] of cases) {
      const res = await post(body);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.match((await json<{ error: string }>(res)).error, pattern, JSON.stringify(body));
    }
    for (const [method, url] of [
      ['GET', '/api/mcp/servers/nope'],
      ['PUT', '/api/mcp/servers/nope'],
      ['DELETE', '/api/mcp/servers/nope'],
      ['GET', '/api/mcp/catalog/nope'],
    ]) {
      const res = await env.k.request(url, { method, ...(method === 'PUT' ? { json: { name: 'nope', transport: 'stdio', command: 'node' } } : {}) });
      assert.equal(res.status, 404, `${method} ${url}`);
    }
  });

  it('servers of config.toml are listed and connected, and read-only through the API', async () => {
    const view = await waitConnected(env.k, 'from-config');
    assert.equal(view.env.join(), 'FIXTURE_TOKEN');
    assert.equal((await env.k.request('/api/mcp/servers/from-config', { method: 'DELETE' })).status, 409);
    assert.equal((await env.k.request('/api/mcp/servers/from-config', { method: 'PUT', json: { transport: 'stdio', command: 'node' } })).status, 409);
  });

  it('the catalogue lists built-in and folder templates in the registry format', async () => {
    const list = await json<{ entries: Array<Record<string, unknown>>; total: number }>(await env.k.request('/api/mcp/catalog'));
    const ids = list.entries.map((e) => e.id);
    for (const id of ['filesystem', 'git', 'fetch', 'memory', 'sqlite', 'github', 'postgres', 'slack', 'brave-search', 'puppeteer', 'fixture-tpl'])
      assert.ok(ids.includes(id), id);
    assert.ok(!ids.includes('Not Valid'));
    assert.equal(list.total, list.entries.length);
    const github = await json<{ required_env: Array<{ name: string; is_secret: boolean }>; setup_instructions: string; transport: { type: string } }>(
      await env.k.request('/api/mcp/catalog/github'),
    );
    assert.deepEqual(
      github.required_env.map((e) => e.name),
      ['GITHUB_PERSONAL_ACCESS_TOKEN'],
    );
    assert.equal(github.required_env[0].is_secret, true);
    assert.equal(github.transport.type, 'stdio');
    assert.ok(github.setup_instructions.length > 20);
    for (const id of ['from-url', 'json-one', 'json-two']) assert.ok(ids.includes(id), `${id} (a template of [mcp] catalog_urls)`);
    assert.equal(list.entries.find((e) => e.id === 'from-url')!.source, `${sse.url}/tpl.toml`);
    const tpl = await json<{ setup_instructions: string; installed: boolean }>(await env.k.request('/api/mcp/catalog/fixture-tpl'));
    assert.equal(tpl.setup_instructions, 'Nothing to set up.', 'setup_instructions written after [health_check] is still read');
    assert.equal(tpl.installed, false);
  });

  it('installs from the catalogue with credentials that reach the server and are never read back', async () => {
    const res = await post({ template_id: 'fixture-tpl', credentials: { FIXTURE_TOKEN: 'tok-42-secret' } });
    assert.equal(res.status, 201);
    const created = await json<ServerView>(res);
    assert.equal(created.name, 'fixture-tpl');
    assert.equal(created.template_id, 'fixture-tpl');
    await waitConnected(env.k, 'fixture-tpl');
    const agent = await spawnAgent(env.k, 'tpl-user', 'mcp_servers = ["fixture-tpl"]');
    env.fake.enqueue({ toolCalls: [{ name: 'mcp_fixture_tpl_env', input: {} }] }, { text: 'ok' });
    const before = env.fake.requests.length;
    await env.k.request(`/api/agents/${agent}/message`, { method: 'POST', json: { message: 'env' } });
    assert.match(JSON.stringify(env.fake.requests[before + 1].body.messages), /tok-42-secret/);
    const everything =
      JSON.stringify(await json(await env.k.request('/api/mcp/servers'))) + JSON.stringify(await json(await env.k.request('/api/mcp/catalog')));
    assert.ok(!everything.includes('tok-42-secret'));
    assert.equal((await json<{ installed: boolean }>(await env.k.request('/api/mcp/catalog/fixture-tpl'))).installed, true);
    assert.equal((await post({ template_id: 'fixture-tpl', credentials: { FIXTURE_TOKEN: 'x' } })).status, 409);
  });

  it('PUT replaces the configuration and keeps stored credentials unless given', async () => {
    const res = await env.k.request('/api/mcp/servers/fixture-tpl', { method: 'PUT', json: { template_id: 'fixture-tpl', timeout_secs: 7 } });
    assert.equal(res.status, 200, await res.clone().text());
    const view = await waitConnected(env.k, 'fixture-tpl');
    assert.deepEqual(view.env, ['FIXTURE_TOKEN']);
    const renamed = await env.k.request('/api/mcp/servers/fixture-tpl', { method: 'PUT', json: { name: 'from-config', transport: 'stdio', command: 'node' } });
    assert.equal(renamed.status, 409);
  });

  it('connects to an MCP server over Streamable HTTP (this service’s own /api/mcp)', async () => {
    await spawnAgent(env.k, 'echoer');
    const res = await post({ name: 'self', transport: { type: 'http', url: `${env.k.url}/api/mcp` } });
    assert.equal(res.status, 201);
    const view = await waitConnected(env.k, 'self');
    assert.ok(
      view.tools.some((t) => t.name === 'ask_agent_echoer'),
      JSON.stringify(view.tools),
    );
    assert.equal(view.tools.find((t) => t.name === 'ask_agent_echoer')!.agent_tool, 'mcp_self_ask_agent_echoer');
    const del = await env.k.request('/api/mcp/servers/self', { method: 'DELETE' });
    assert.equal(del.status, 200);
  });

  it('connects to an MCP server over SSE (the SDK’s SSE server transport); an agent calls its tool', async () => {
    const res = await post({ name: 'sse', transport: { type: 'sse', url: `${sse.url}/sse` } });
    assert.equal(res.status, 201);
    const view = await waitConnected(env.k, 'sse');
    assert.equal(view.tools[0]?.agent_tool, 'mcp_sse_shout');
    const agent = await spawnAgent(env.k, 'sse-user', 'mcp_servers = ["sse"]');
    env.fake.enqueue({ toolCalls: [{ name: 'mcp_sse_shout', input: { text: 'quiet please' } }] }, { text: 'ok' });
    const before = env.fake.requests.length;
    await env.k.request(`/api/agents/${agent}/message`, { method: 'POST', json: { message: 'shout' } });
    assert.match(JSON.stringify(env.fake.requests[before + 1].body.messages), /QUIET PLEASE/);
    assert.equal((await env.k.request('/api/mcp/servers/sse', { method: 'DELETE' })).status, 200);
  });

  it('reload reads new templates and reports; health aggregates', async () => {
    writeFileSync(path.join(dir, 'later.toml'), fixtureTemplate('later'));
    const res = await env.k.request('/api/mcp/reload', { method: 'POST' });
    assert.equal(res.status, 200);
    const body = await json<{ status: string; catalog: number }>(res);
    assert.equal(body.status, 'reloaded');
    assert.equal((await env.k.request('/api/mcp/catalog/later')).status, 200);
    const health = await json<{ status: string; total: number; connected: number; servers: Array<{ name: string; last_error: string | null }> }>(
      await env.k.request('/api/mcp/health'),
    );
    assert.equal(health.status, 'ok');
    assert.equal(health.total, health.connected);
    assert.ok(health.servers.every((s) => s.last_error === null));
    assert.equal((await server(env.k, 'fixture-tpl')).connected, true);
  });
});

describe('MCP servers across a restart', () => {
  it('a stored server starts again with its sealed credentials; shutdown ends its process', async () => {
    let first: Env | undefined = await startEnv('[mcp]\nreconnect_base_ms = 50', [], { keepHome: true });
    let second: Env | undefined;
    const home = first.k.home;
    try {
      const view = await addFixture(first.k, 'kept', { FIXTURE_TOKEN: 'kept-secret' });
      const health = await json<{ servers: Array<{ id: string; pid: number }> }>(await first.k.request('/api/mcp/health'));
      const pid = health.servers.find((s) => s.id === view.id)!.pid;
      assert.ok(isAlive(pid));
      await stopEnv(first);
      first = undefined;
      assert.ok(!isAlive(pid), 'the stdio server outlived the shutdown');
      second = await startEnv('[mcp]\nreconnect_base_ms = 50', [], { home });
      const again = await waitConnected(second.k, 'kept');
      assert.equal(again.id, view.id);
      const agent = await spawnAgent(second.k, 'kept-user', 'mcp_servers = ["kept"]');
      second.fake.enqueue({ toolCalls: [{ name: 'mcp_kept_env', input: {} }] }, { text: 'ok' });
      const before = second.fake.requests.length;
      await second.k.request(`/api/agents/${agent}/message`, { method: 'POST', json: { message: 'env' } });
      assert.match(JSON.stringify(second.fake.requests[before + 1].body.messages), /kept-secret/, 'the credentials were opened after the restart');
    } finally {
      await stopEnv(first);
      await stopEnv(second);
      rmSync(home, { recursive: true, force: true });
    }
  });
});

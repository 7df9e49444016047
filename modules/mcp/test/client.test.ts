/** The service as MCP client: stdio servers as real subprocesses, their tools in agent turns, supervision, removal. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { addFixture, EVERYTHING, json, server, spawnAgent, startEnv, STDIO_SERVER, stopEnv, waitConnected, type Env, type ServerView } from './helpers.ts';
import { isAlive } from '../services/process-tree.ts';

type Body = Record<string, unknown>;
const toolNames = (body: Body) => ((body.tools as Array<{ function: { name: string } }> | undefined) ?? []).map((t) => t.function.name);

describe('MCP client: stdio servers', () => {
  let env: Env;
  before(async () => {
    env = await startEnv('[mcp]\nreconnect_base_ms = 50\nmax_result_chars = 1000\ntimeout_secs = 2');
  });
  after(() => stopEnv(env));

  it('connects a stdio server, lists its tools and never reads back env values', async () => {
    const view = await addFixture(env.k, 'fixture', { FIXTURE_TOKEN: 'secret-token-value' });
    assert.equal(view.status, 'connected');
    assert.deepEqual(
      view.tools.map((t) => t.name),
      ['echo', 'add', 'pids', 'env', 'slow', 'fail', 'big'],
    );
    assert.equal(view.tools[0].agent_tool, 'mcp_fixture_echo');
    assert.deepEqual(view.env, ['FIXTURE_TOKEN']);
    const list = await json<{ servers: ServerView[]; total: number }>(await env.k.request('/api/mcp/servers'));
    assert.equal(list.total, 1);
    assert.equal(list.servers[0].name, 'fixture');
    const raw = JSON.stringify(list) + JSON.stringify(await server(env.k, view.id));
    assert.ok(!raw.includes('secret-token-value'), 'an env value was read back');
    const row = await env.k.kernel.store.one<{ secrets: string }>('SELECT secrets FROM mcp_servers WHERE id = ?', [view.id]);
    assert.ok(row && !row.secrets.includes('secret-token-value'), 'the env value is stored in clear');
  });

  it('an agent listing the server calls its tool through the model; the result reaches the model', async () => {
    const id = await spawnAgent(env.k, 'user-of-mcp', 'mcp_servers = ["fixture"]');
    env.fake.enqueue({ toolCalls: [{ name: 'mcp_fixture_echo', input: { text: 'hello' } }] }, { text: 'the server said it' });
    const before = env.fake.requests.length;
    const res = await env.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'use the echo tool' } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal((await json(res)).response, 'the server said it');
    const [first, second] = env.fake.requests.slice(before);
    assert.ok(toolNames(first.body).includes('mcp_fixture_echo'));
    assert.match(JSON.stringify(second.body.messages), /echo: hello/);
  });

  it('mcp_servers alone grants MCP tools: none without it, not even with tools = ["*"]', async () => {
    const id = await spawnAgent(env.k, 'no-mcp', '', '["*"]');
    env.fake.enqueue({ text: 'fine' });
    const before = env.fake.requests.length;
    await env.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'hi' } });
    const names = toolNames(env.fake.requests[before].body);
    assert.ok(names.length > 0, 'the agent has built-in tools');
    assert.ok(!names.some((n) => n.startsWith('mcp_')), `MCP tools offered without mcp_servers: ${names}`);
    const put = await env.k.request(`/api/agents/${id}/mcp_servers`, { method: 'PUT', json: { mcp_servers: ['fixture'] } });
    assert.equal(put.status, 200);
    env.fake.enqueue({ text: 'fine' });
    const next = env.fake.requests.length;
    await env.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'hi' } });
    assert.ok(toolNames(env.fake.requests[next].body).includes('mcp_fixture_add'));
  });

  it('tool errors, long results and slow tools follow the limits', async () => {
    const id = await spawnAgent(env.k, 'limits', 'mcp_servers = ["*"]');
    const call = async (name: string, input: Body) => {
      env.fake.enqueue({ toolCalls: [{ name, input }] }, { text: 'ok' });
      const before = env.fake.requests.length;
      await env.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'go' } });
      const messages = env.fake.requests[before + 1].body.messages as Array<{ role: string; content: string }>;
      return messages.filter((m) => m.role === 'tool').at(-1)!.content;
    };
    assert.match(await call('mcp_fixture_fail', {}), /it failed on purpose/);
    const big = await call('mcp_fixture_big', { n: 5000 });
    assert.match(big, /truncated at 1000 characters/);
    assert.ok(big.length < 1100);
    assert.match(await call('mcp_fixture_slow', { ms: 5000 }), /timed out|timeout/i);
    assert.match(await call('mcp_fixture_add', { a: 'x' }), /invalid input|must be number|required/);
  });

  it('a killed server process is reconnected (a new process, tools back)', async () => {
    const first = (await json<{ servers: Array<{ name: string; pid: number }> }>(await env.k.request('/api/mcp/health'))).servers.find(
      (s) => s.name === 'fixture',
    )!;
    assert.ok(first.pid > 0);
    process.kill(first.pid, 'SIGKILL');
    const again = await waitFor(
      async () => {
        const h = await json<{ servers: Array<{ name: string; pid: number; connected: boolean }> }>(await env.k.request('/api/mcp/health'));
        const s = h.servers.find((x) => x.name === 'fixture')!;
        return s.connected && s.pid !== first.pid ? s : undefined;
      },
      8000,
      'reconnect after kill',
    );
    assert.equal(again!.connected, true);
    assert.equal((await server(env.k, 'fixture')).tools.length, 7);
  });

  it('POST …/reconnect starts a new connection and reports it', async () => {
    const res = await env.k.request('/api/mcp/servers/fixture/reconnect', { method: 'POST' });
    assert.equal(res.status, 200);
    const body = await json(res);
    assert.equal(body.status, 'connected');
    assert.equal(body.tool_count, 7);
    assert.equal((await env.k.request('/api/mcp/servers/nope/reconnect', { method: 'POST' })).status, 404);
  });

  it('removing a server kills its process tree', async () => {
    await env.k.request('/api/mcp/servers', {
      method: 'POST',
      json: { name: 'tree', transport: { type: 'stdio', command: process.execPath, args: [STDIO_SERVER] }, env: { FIXTURE_GRANDCHILD: '1' } },
    });
    await waitConnected(env.k, 'tree');
    const agent = await spawnAgent(env.k, 'tree-user', 'mcp_servers = ["tree"]');
    env.fake.enqueue({ toolCalls: [{ name: 'mcp_tree_pids', input: {} }] }, { text: 'ok' });
    const before = env.fake.requests.length;
    await env.k.request(`/api/agents/${agent}/message`, { method: 'POST', json: { message: 'pids' } });
    const tool = (env.fake.requests[before + 1].body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'tool')!;
    const pids = JSON.parse(tool.content) as { pid: number; grandchild: number };
    assert.ok(isAlive(pids.pid) && isAlive(pids.grandchild));
    const del = await env.k.request('/api/mcp/servers/tree', { method: 'DELETE' });
    assert.equal(del.status, 200);
    assert.equal((await json(del)).status, 'removed');
    assert.ok(!isAlive(pids.pid), 'the server process survived removal');
    await waitFor(() => !isAlive(pids.grandchild), 3000, 'grandchild gone');
    assert.equal((await env.k.request('/api/mcp/servers/tree')).status, 404);
  });

  it('a server that cannot start shows why in health, with its stderr', async () => {
    await env.k.request('/api/mcp/servers', {
      method: 'POST',
      json: { name: 'broken', transport: { type: 'stdio', command: process.execPath, args: [STDIO_SERVER] }, env: { FIXTURE_FAIL_START: '1' } },
    });
    const health = await waitFor(
      async () => {
        const h = await json<{ status: string; servers: Array<{ name: string; last_error: string | null; consecutive_failures: number }> }>(
          await env.k.request('/api/mcp/health'),
        );
        const s = h.servers.find((x) => x.name === 'broken');
        return s?.last_error ? { h, s } : undefined;
      },
      8000,
      'broken server error',
    );
    assert.match(health!.s.last_error!, /refusing to start/);
    assert.equal(health!.h.status, 'degraded');
    const missing = await env.k.request('/api/mcp/servers', {
      method: 'POST',
      json: { name: 'nocmd', transport: { type: 'stdio', command: '/no/such/program' } },
    });
    assert.equal(missing.status, 201);
    const s = await waitFor(async () => (await server(env.k, 'nocmd')).last_error, 8000, 'spawn error');
    assert.match(String(s), /ENOENT/);
    await env.k.request('/api/mcp/servers/broken', { method: 'DELETE' });
    await env.k.request('/api/mcp/servers/nocmd', { method: 'DELETE' });
  });

  it('a real npm MCP server (server-everything) over stdio: connect, list, call, killed → reconnected, removed → gone', async () => {
    const res = await env.k.request('/api/mcp/servers', {
      method: 'POST',
      json: { name: 'everything', transport: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    });
    assert.equal(res.status, 201);
    const view = await waitConnected(env.k, 'everything', 15000);
    assert.ok(view.tools.some((t) => t.name === 'echo'));
    const id = await spawnAgent(env.k, 'everything-user', 'mcp_servers = ["everything"]');
    env.fake.enqueue({ toolCalls: [{ name: 'mcp_everything_echo', input: { message: 'ping from talon' } }] }, { text: 'done' });
    const before = env.fake.requests.length;
    await env.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'echo' } });
    assert.match(JSON.stringify(env.fake.requests[before + 1].body.messages), /ping from talon/);

    const pidOf = async () =>
      (await json<{ servers: Array<{ name: string; pid: number | null; connected: boolean }> }>(await env.k.request('/api/mcp/health'))).servers.find(
        (s) => s.name === 'everything',
      )!;
    const first = (await pidOf()).pid!;
    process.kill(first, 'SIGKILL');
    const second = (await waitFor(
      async () => {
        const s = await pidOf();
        return s.connected && s.pid !== first ? s.pid! : undefined;
      },
      15000,
      'server-everything reconnected',
    ))!;
    assert.ok(isAlive(second));
    const del = await env.k.request('/api/mcp/servers/everything', { method: 'DELETE' });
    assert.equal(del.status, 200);
    assert.ok(!isAlive(second), 'the server process survived removal');
  });
});

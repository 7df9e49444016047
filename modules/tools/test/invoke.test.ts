import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

const manifest = (name: string, tools: string) =>
  `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n\n[capabilities]\ntools = ${tools}\nmemory_read = ["*"]\nmemory_write = ["self.*"]\n`;

async function body(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

async function spawn(k: TestKernel, name: string, tools = '["*"]'): Promise<string> {
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest(name, tools) } });
  assert.equal(res.status, 201, await res.clone().text());
  return (await body(res)).agent_id as string;
}

const invoke = (k: TestKernel, tool: string, input: unknown, agentId?: string) =>
  k.request(`/api/tools/${tool}/invoke${agentId === undefined ? '' : `?agent_id=${encodeURIComponent(agentId)}`}`, { method: 'POST', json: input });

describe('tools endpoints, reference spelling [tool_invoke]', () => {
  let k: TestKernel;
  let agentId: string;
  before(async () => {
    k = await startTestKernel({
      only: ['tools', 'error-envelope'],
      config: '[tool_invoke]\nenabled = true\nallowlist = ["file_*", "agent_list", "memory_*", "agent_send", "notify_owner"]\n',
    });
    agentId = await spawn(k, 'invoker');
  });
  after(() => k?.stop());

  it('GET /api/tools lists every tool of the waterfall', async () => {
    const res = await k.request('/api/tools');
    assert.equal(res.status, 200);
    const data = (await res.json()) as { tools: Array<{ name: string; description: string; input_schema: { type: string }; source: string }>; total: number };
    const names = data.tools.map((t) => t.name);
    for (const n of [
      'file_read',
      'file_write',
      'file_list',
      'apply_patch',
      'shell_exec',
      'web_fetch',
      'memory_store',
      'memory_recall',
      'memory_list',
      'notify_owner',
      'agent_send',
      'agent_spawn',
      'agent_list',
      'agent_kill',
    ]) {
      assert.ok(names.includes(n), n);
    }
    assert.equal(data.total, data.tools.length);
    const read = data.tools.find((t) => t.name === 'file_read')!;
    assert.equal(read.source, 'builtin');
    assert.equal(read.input_schema.type, 'object');
  });

  it('GET /api/tools/{name} resolves aliases and answers 404 naming unknown tools', async () => {
    const alias = await k.request('/api/tools/read_file');
    assert.equal(alias.status, 200);
    assert.equal((await body(alias)).name, 'file_read');
    const missing = await k.request('/api/tools/no_such_tool');
    assert.equal(missing.status, 404);
    assert.deepEqual(await body(missing), { error: "Tool 'no_such_tool' not found" });
  });

  it('403 for tools not on the allowlist, 404 for unknown allowed names', async () => {
    const res = await invoke(k, 'shell_exec', { command: 'echo hi' }, agentId);
    assert.equal(res.status, 403);
    assert.deepEqual(await body(res), { error: "Tool 'shell_exec' is not in '[tool_invoke] allowlist'" });
    const unknown = await invoke(k, 'file_nothing', {});
    assert.equal(unknown.status, 404);
    assert.match((await body(unknown)).error as string, /file_nothing/);
  });

  it('400 for input that does not match the schema, for a missing or malformed agent_id; 404 for an unknown agent', async () => {
    const bad = await invoke(k, 'file_write', { path: 'x.txt' }, agentId);
    assert.equal(bad.status, 400);
    assert.match((await body(bad)).error as string, /missing required field 'content'/);
    const noAgent = await invoke(k, 'agent_send', { agent_id: agentId, message: 'hi' });
    assert.equal(noAgent.status, 400);
    assert.match((await body(noAgent)).error as string, /tool 'agent_send' acts for an agent: pass \?agent_id/);
    const malformed = await invoke(k, 'file_read', { path: 'x.txt' }, 'not-a-uuid');
    assert.equal(malformed.status, 400);
    assert.match((await body(malformed)).error as string, /agent_id/);
    const ghost = await invoke(k, 'file_read', { path: 'x.txt' }, '99999999-9999-4999-8999-999999999999');
    assert.equal(ghost.status, 404);
  });

  it('without agent_id, workspace tools run in the direct-invocation workspace under $TALON_HOME', async () => {
    const write = await invoke(k, 'file_write', { path: 'direct.txt', content: 'by the operator' });
    assert.equal(write.status, 200, JSON.stringify(await body(write.clone())));
    assert.equal(readFileSync(path.join(k.home, 'workspaces', 'direct-invocation', 'direct.txt'), 'utf8'), 'by the operator');
    const list = await invoke(k, 'file_list', { path: '.' });
    assert.equal(list.status, 200);
    assert.match(JSON.stringify(await body(list)), /direct\.txt/);
    for (const [tool, input] of [
      ['notify_owner', { reason: 'r', summary: 's' }],
      ['shell_exec', { command: 'echo hi' }],
      ['memory_store', { key: 'k', value: 'v' }],
    ] as const) {
      const res = await invoke(k, tool, input);
      assert.ok(res.status === 400 || res.status === 403, `${tool}: ${res.status}`);
      if (res.status === 400) assert.match((await body(res)).error as string, /acts for an agent/);
    }
  });

  it('200 runs the tool in the agent workspace; aliases work; tool errors are results', async () => {
    const write = await invoke(k, 'write_file', { path: 'notes/a.txt', content: 'hello' }, agentId);
    assert.equal(write.status, 200);
    const w = await body(write);
    assert.equal(w.tool, 'file_write');
    assert.equal(w.is_error, false);
    const file = (w.content as string).replace(/^Successfully wrote 5 bytes to /, '');
    assert.equal(path.basename(path.dirname(path.dirname(file))), agentId, 'written inside the agent workspace');
    assert.equal(readFileSync(file, 'utf8'), 'hello');
    const read = await body(await invoke(k, 'file_read', { path: 'notes/a.txt' }, agentId));
    assert.deepEqual(read, { tool: 'file_read', is_error: false, content: 'hello' });
    const escape = await body(await invoke(k, 'file_read', { path: '../../x' }, agentId));
    assert.equal(escape.is_error, true);
  });

  it('memory tools answer a clear error result when the memory module is not loaded', async () => {
    const res = await invoke(k, 'memory_store', { key: 'k', value: 'v' }, agentId);
    assert.equal(res.status, 200);
    assert.deepEqual(await body(res), { tool: 'memory_store', is_error: true, content: 'Memory is not available: the memory module is not loaded.' });
  });

  it('agent_list runs without an agent', async () => {
    const res = await invoke(k, 'agent_list', {});
    assert.equal(res.status, 200);
    assert.match((await body(res)).content as string, /invoker \(id: /);
  });

  it('an agent that is not granted the tool is refused', async () => {
    const limited = await spawn(k, 'limited', '["file_read"]');
    const res = await invoke(k, 'file_write', { path: 'a', content: 'b' }, limited);
    assert.equal(res.status, 403);
    assert.match((await body(res)).error as string, /not granted tool 'file_write'/);
  });

  it('a tool granted by one of its aliases may be invoked, as the agent loop allows it', async () => {
    const aliased = await spawn(k, 'aliased', '["read_file"]');
    const res = await invoke(k, 'file_read', { path: 'missing.txt' }, aliased);
    assert.equal(res.status, 200);
  });
});

describe('tools endpoints, [tools.invoke] spelling and the disabled default', () => {
  it('[tools.invoke] allowlist enables direct invocation for the listed tools', async () => {
    const k = await startTestKernel({ only: ['tools', 'error-envelope'], config: '[tools.invoke]\nallowlist = ["agent_*"]\n' });
    try {
      assert.equal((await invoke(k, 'agent_list', {})).status, 200);
      const res = await invoke(k, 'file_read', { path: 'x' });
      assert.equal(res.status, 403);
      assert.deepEqual(await body(res), { error: "Tool 'file_read' is not in '[tool_invoke] allowlist'" });
    } finally {
      await k.stop();
    }
  });

  it('without configuration direct invocation is disabled (403 in the reference words)', async () => {
    const k = await startTestKernel({ only: ['tools', 'error-envelope'] });
    try {
      const res = await invoke(k, 'agent_list', {});
      assert.equal(res.status, 403);
      assert.deepEqual(await body(res), {
        error: "Direct tool invocation is disabled. Enable '[tool_invoke] enabled = true' and add the tool to 'allowlist'.",
      });
      assert.equal((await k.request('/api/tools')).status, 200, 'listing stays available');
    } finally {
      await k.stop();
    }
  });
});

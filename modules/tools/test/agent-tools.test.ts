import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'smol-toml';
import { agentSendTool, MAX_CALL_DEPTH } from '../tools/agent-send.ts';
import type { AgentRunner, TurnEvent, TurnRequest, TurnResult } from '@talon/agents';
import { agentSpawnTool } from '../tools/agent-spawn.ts';
import { agentListTool } from '../tools/agent-list.ts';
import { agentKillTool } from '../tools/agent-kill.ts';
import { covered, inheritanceProblem } from '../services/inheritance.ts';
import { childManifestToml } from '../services/manifest-toml.ts';
import { agentRecord, fakeDeps, FakeRegistry, FakeRunner, toolCtx } from './helpers.ts';

describe('capability inheritance (pure)', () => {
  const parent = { tools: ['file_read', 'web_fetch', 'shell_exec'], network: ['*.example.com', 'api.test'], shell: ['git *'] };
  it('allows a subset, literals under a parent glob, and anything under "*"', () => {
    assert.equal(inheritanceProblem(parent, { tools: ['file_read'], network: ['docs.example.com', 'api.test'], shell: ['git *'] }), undefined);
    assert.equal(inheritanceProblem({ tools: ['*'], network: ['*'], shell: ['*'] }, { tools: ['shell_exec'], network: ['*'], shell: ['*'] }), undefined);
    assert.equal(inheritanceProblem(parent, { tools: [], network: [], shell: [] }), undefined);
  });
  it('refuses every excess, naming it', () => {
    const problem = inheritanceProblem(parent, { tools: ['file_write', 'file_read'], network: ['*'], shell: ['rm *', 'git *'] });
    assert.equal(
      problem,
      'Capability inheritance violation: a spawned agent cannot have capabilities its parent lacks: tools [file_write]; network [*]; shell [rm *]',
    );
  });
  it('a child glob is covered only by "*" or the same glob', () => {
    assert.equal(covered(['git *'], 'git *'), true);
    assert.equal(covered(['git *'], 'git log *'), false);
    assert.equal(covered(['git *'], 'git log'), true);
    assert.equal(covered(['git *'], 'g*'), false);
  });
});

describe('agent tools', () => {
  const parent = agentRecord({
    name: 'boss',
    tools: ['file_read', 'agent_spawn'],
    capabilities: { agent_spawn: true, network: ['*.example.com'], memory_read: ['*'], memory_write: ['self.*'] },
  });

  it('agent_spawn builds a manifest within the parent capabilities and passes parentId', async () => {
    const registry = new FakeRegistry();
    const out = await agentSpawnTool(fakeDeps({ registry })).execute(
      { name: 'helper', system_prompt: 'Say "hi"\nnow', tools: ['file_read'], network: ['a.example.com'] },
      toolCtx(parent),
    );
    assert.equal(out.isError, false);
    assert.match(out.content, /^Agent spawned successfully\.\nID: 33333333-.*\nName: helper$/);
    assert.equal(registry.spawned[0].parentId, parent.id);
    const toml = parse(registry.spawned[0].manifestToml) as Record<string, Record<string, unknown>>;
    assert.equal(toml.name as unknown, 'helper');
    assert.deepEqual({ ...toml.model }, { provider: 'openai', model: 'fake-model', system_prompt: 'Say "hi"\nnow' });
    assert.deepEqual(
      { ...toml.capabilities },
      { tools: ['file_read'], network: ['a.example.com'], shell: [], memory_read: ['*'], memory_write: ['self.*'], agent_spawn: false },
    );
  });

  it('agent_spawn refuses capabilities beyond the parent and agents without agent_spawn = true', async () => {
    const registry = new FakeRegistry();
    const tool = agentSpawnTool(fakeDeps({ registry }));
    const excess = await tool.execute({ name: 'x', system_prompt: 'p', tools: ['shell_exec'], shell: ['*'] }, toolCtx(parent));
    assert.equal(excess.isError, true);
    assert.match(excess.content, /Capability inheritance violation.*tools \[shell_exec\]; shell \[\*\]/);
    const noSpawn = await tool.execute({ name: 'x', system_prompt: 'p' }, toolCtx(agentRecord()));
    assert.match(noSpawn.content, /capabilities\.agent_spawn = true/);
    assert.equal(registry.spawned.length, 0);
  });

  it('the child manifest escapes strings safely for TOML', () => {
    const text = childManifestToml({
      name: 'n',
      description: 'd',
      provider: 'p',
      model: 'm',
      systemPrompt: 'a\u007f"\\\u0001',
      tools: ['x"y'],
      network: [],
      shell: [],
      memoryRead: [],
      memoryWrite: [],
    });
    const parsed = parse(text) as { model: { system_prompt: string }; capabilities: { tools: string[] } };
    assert.equal(parsed.model.system_prompt, 'a\u007f"\\\u0001');
    assert.deepEqual(parsed.capabilities.tools, ['x"y']);
  });

  it('agent_send runs a turn of the target (by name or id) with parentTurnId and the signal', async () => {
    const registry = new FakeRegistry();
    const target = agentRecord({ id: '55555555-5555-4555-8555-555555555555', name: 'worker' });
    registry.agents.push(target, parent);
    const runner = new FakeRunner();
    const tool = agentSendTool(fakeDeps({ registry, runner }));
    const ctx = toolCtx(parent);
    assert.deepEqual(await tool.execute({ agent_id: 'worker', message: 'ping' }, ctx), { content: 'pong', isError: false });
    assert.equal(runner.requests[0].agentId, target.id);
    assert.equal(runner.requests[0].parentTurnId, 'turn-1');
    assert.equal(runner.requests[0].signal, ctx.signal);
    assert.equal(runner.requests[0].origin, 'agent_send');
    assert.equal((await tool.execute({ agent_id: target.id, message: 'again' }, ctx)).content, 'pong');
    assert.match((await tool.execute({ agent_id: 'ghost', message: 'x' }, ctx)).content, /Agent not found: ghost/);
    assert.match((await tool.execute({ agent_id: 'boss', message: 'x' }, ctx)).content, /itself/);
  });

  it('agent_send stops at the maximum call depth (A → B → A ... loops end)', async () => {
    const registry = new FakeRegistry();
    const a = agentRecord({ id: '66666666-6666-4666-8666-666666666666', name: 'a' });
    const b = agentRecord({ id: '77777777-7777-4777-8777-777777777777', name: 'b' });
    registry.agents.push(a, b);
    let turns = 0;
    let innermost = '';
    // Each turn of the target immediately sends to the other agent, like two agents ping-ponging.
    const runner: AgentRunner = new (class extends FakeRunner {
      override async run(request: TurnRequest, onEvent?: (e: TurnEvent) => void): Promise<TurnResult> {
        const turnId = `turn-${++turns}`;
        onEvent?.({ type: 'started', turnId, agentId: request.agentId, sessionId: 's' });
        const self = registry.get(request.agentId)!;
        const other = self.id === a.id ? 'b' : 'a';
        const out = await tool.execute({ agent_id: other, message: 'ping' }, { ...toolCtx(self), turnId });
        if (out.isError) innermost = out.content;
        return {
          turnId,
          agentId: self.id,
          sessionId: 's',
          response: out.content,
          inputTokens: 0,
          outputTokens: 0,
          iterations: 1,
          costUsd: 0,
          interrupted: false,
        };
      }
    })();
    const tool = agentSendTool(fakeDeps({ registry, runner }));
    await tool.execute({ agent_id: 'b', message: 'start' }, toolCtx(a));
    assert.equal(turns, MAX_CALL_DEPTH);
    assert.match(innermost, /maximum agent call depth \(5\)/);
  });

  it('agent_list and agent_kill', async () => {
    const registry = new FakeRegistry();
    const target = agentRecord({ id: '55555555-5555-4555-8555-555555555555', name: 'worker' });
    registry.agents.push(parent, target);
    const deps = fakeDeps({ registry });
    const list = await agentListTool(deps).execute({}, toolCtx(parent));
    assert.match(list.content, /^2 agent\(s\):\n- boss \(id: 1111.*state: Running, model: openai\/fake-model\)\n- worker/);
    const kill = agentKillTool(deps);
    assert.match((await kill.execute({ agent_id: 'boss' }, toolCtx(parent))).content, /cannot kill the calling agent/);
    assert.deepEqual(await kill.execute({ agent_id: 'worker' }, toolCtx(parent)), { content: `Agent 'worker' (${target.id}) killed.`, isError: false });
    assert.equal((await kill.execute({ agent_id: 'worker' }, toolCtx(parent))).isError, true);
  });
});

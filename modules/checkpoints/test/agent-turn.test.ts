/**
 * End to end: a real agent turn (agents + tools + llm-openai) against the
 * scripted fake provider calls file_write and apply_patch; the checkpoints
 * module snapshots before each, and the restore endpoint brings a version back.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startAgentTestKernel, type AgentTestKernel } from '@talon/testing';
import { git, hashName } from './support.ts';

let k: AgentTestKernel;

before(async () => {
  k = await startAgentTestKernel({ only: ['checkpoints', 'agents', 'tools', 'error-envelope'] });
});
after(async () => {
  await k?.stop();
});

async function turn(agentId: string, toolCalls: Array<{ name: string; input: Record<string, unknown> }>): Promise<void> {
  k.fake.enqueue({ toolCalls }, { text: 'done' });
  const res = await k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'write it' } });
  assert.equal(res.status, 200, await res.clone().text());
}

test('file_write and apply_patch in real agent turns are checkpointed and restorable', async () => {
  const manifest = 'name = "writer"\n[model]\nprovider = "default"\nmodel = "default"\n[capabilities]\ntools = ["file_write", "apply_patch"]\n';
  const spawned = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
  assert.equal(spawned.status, 201, await spawned.clone().text());
  const { agent_id: agentId } = (await spawned.json()) as { agent_id: string };
  const workspace = path.join(k.home, 'workspaces', agentId);
  const shadow = path.join(k.home, 'data', 'checkpoints', hashName(workspace));

  await turn(agentId, [{ name: 'file_write', input: { path: 'notes/plan.md', content: 'version 1\n' } }]);
  assert.equal(readFileSync(path.join(workspace, 'notes/plan.md'), 'utf8'), 'version 1\n');
  await turn(agentId, [{ name: 'file_write', input: { path: 'notes/plan.md', content: 'version 2\n' } }]);
  await turn(agentId, [
    { name: 'apply_patch', input: { patch: '*** Begin Patch\n*** Update File: notes/plan.md\n@@\n-version 2\n+version 3\n*** End Patch' } },
  ]);
  assert.equal(readFileSync(path.join(workspace, 'notes/plan.md'), 'utf8'), 'version 3\n');

  const listed = (await (await k.request(`/api/checkpoints?working_dir=${encodeURIComponent(workspace)}`)).json()) as Array<{
    commit: string;
    agent_id: string;
    session_id: string;
    tool: string;
    path: string;
  }>;
  assert.deepEqual(
    listed.map((e) => [e.tool, e.path, e.agent_id]),
    [
      ['apply_patch', 'notes/plan.md', agentId],
      ['file_write', 'notes/plan.md', agentId],
    ],
  );
  assert.match(listed[0].session_id, /^[0-9a-f-]{36}$/);
  assert.equal(git(shadow, ['show', `${listed[1].commit}:notes/plan.md`]), 'version 1\n');
  assert.equal(git(shadow, ['show', `${listed[0].commit}:notes/plan.md`]), 'version 2\n');

  const restored = await k.request('/api/checkpoints/restore', { method: 'POST', json: { working_dir: workspace, commit: listed[1].commit.slice(0, 8) } });
  assert.equal(restored.status, 200, await restored.clone().text());
  assert.equal(readFileSync(path.join(workspace, 'notes/plan.md'), 'utf8'), 'version 1\n');
});

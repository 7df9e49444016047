import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@talon/testing';
import { json, sent, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

interface Approval {
  id: string;
  agent_id: string;
  agent_name: string;
  action: string;
  status: string;
  risk_level: string;
  payload: { tool: string; input: Record<string, unknown> };
  decided_by: string | null;
}

describe('approvals: gated tool calls', () => {
  let env: Env;
  let agentId: string;
  before(async () => {
    env = await startEnv('require_approval = ["file_w*"]\ntimeout_secs = 1\ntimeout_fallback = "skip"');
    agentId = await spawn(env.k, 'writer');
  });
  after(() => stopEnv(env));

  const workspace = () => path.join(env.k.home, 'workspaces', agentId);

  async function heldCall(file: string): Promise<Approval> {
    env.fake.enqueue({ toolCalls: [{ name: 'file_write', input: { path: file, content: 'hello' } }] }, { text: 'I asked for approval.' });
    const reply = await json<{ response: string }>(
      await env.k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: `write ${file}` } }),
    );
    assert.equal(reply.response, 'I asked for approval.', 'the turn went on without waiting');
    const list = await json<{ approvals: Approval[] }>(await env.k.request('/api/approvals'));
    const approval = list.approvals.find((a) => a.payload.input.path === file)!;
    assert.ok(approval, 'a request was recorded');
    return approval;
  }

  test('a gated call is not run: the model is told it waits, with the request id', async () => {
    const approval = await heldCall('a.txt');
    assert.equal(approval.status, 'pending');
    assert.equal(approval.action, 'file_write');
    assert.equal(approval.agent_name, 'writer');
    assert.equal(approval.risk_level, 'high');
    assert.match(sent(env.fake), new RegExp(`waiting for human approval \\(request ${approval.id}`));
    assert.equal(existsSync(path.join(workspace(), 'a.txt')), false);
    // Approve: the tool runs and the agent continues with its result.
    env.fake.enqueue({ text: 'The file is written.' });
    const res = await env.k.request(`/api/approvals/${approval.id}/approve`, { method: 'POST' });
    assert.equal(res.status, 200);
    const decided = await json<Approval>(res);
    assert.equal(decided.status, 'approved');
    assert.equal(decided.decided_by, 'api');
    await waitFor(() => existsSync(path.join(workspace(), 'a.txt')), 3000, 'the approved write');
    assert.equal(readFileSync(path.join(workspace(), 'a.txt'), 'utf8'), 'hello');
    await waitFor(() => sent(env.fake).includes(`[approval ${approval.id}] A human approved your file_write call; it ran`), 3000, 'the outcome turn');
    const again = await env.k.request(`/api/approvals/${approval.id}/approve`, { method: 'POST' });
    assert.equal(again.status, 409);
  });

  test('a rejected call never runs and the agent is told', async () => {
    const approval = await heldCall('b.txt');
    env.fake.enqueue({ text: 'Understood.' });
    const res = await env.k.request(`/api/approvals/${approval.id}/reject`, { method: 'POST', json: { reason: 'no' } });
    assert.equal((await json<Approval>(res)).status, 'rejected');
    await waitFor(() => sent(env.fake).includes(`[approval ${approval.id}] A human rejected your file_write call`), 3000, 'the rejection turn');
    assert.equal(existsSync(path.join(workspace(), 'b.txt')), false);
  });

  test('an unanswered request expires with the fallback (skip) and the agent is told', async () => {
    const approval = await heldCall('c.txt');
    env.fake.enqueue({ text: 'Skipping.' });
    await waitFor(async () => (await json<Approval>(await env.k.request(`/api/approvals/${approval.id}`))).status === 'expired', 4000, 'expiry');
    await waitFor(
      () => sent(env.fake).includes(`[approval ${approval.id}] Your file_write call got no decision in time and was skipped`),
      3000,
      'the skip turn',
    );
    assert.equal(existsSync(path.join(workspace(), 'c.txt')), false);
    const audit = await json<{ items: Array<{ request_id: string; decision: string; decided_by: string }> }>(await env.k.request('/api/approvals/audit'));
    const mine = audit.items.filter((i) => i.request_id === approval.id).map((i) => `${i.decision}:${i.decided_by}`);
    assert.deepEqual(mine, ['skipped:timeout', 'requested:null']);
  });

  test('tools the policy does not name run at once', async () => {
    env.fake.enqueue({ toolCalls: [{ name: 'file_read', input: { path: 'a.txt' } }] }, { text: 'read it' });
    const before = (await json<{ pending: number }>(await env.k.request('/api/approvals/count'))).pending;
    await env.k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'read' } });
    assert.match(sent(env.fake), /hello/);
    assert.equal((await json<{ pending: number }>(await env.k.request('/api/approvals/count'))).pending, before);
  });
});

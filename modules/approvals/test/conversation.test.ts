/**
 * Approvals in the conversation: the stream reports a held call (approval_pending), the same call asked again while
 * it waits joins its request, and the outcome after the decision is the call's result in the session, never a
 * message from the user.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { json, sent, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

interface Approval {
  id: string;
  status: string;
  payload: { tool: string; input: Record<string, unknown>; session_id: string; call_id: string };
}

interface SessionMessage {
  role: string;
  content: string;
  tool_calls?: { id: string; name: string }[];
  tool_results?: { tool_use_id: string; content: string; is_error: boolean }[];
}

/** The events of an SSE body, in order. */
function events(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message',
      data: JSON.parse(/^data: (.*)$/m.exec(block)![1]) as Record<string, unknown>,
    }));
}

describe('approvals: in the conversation', () => {
  let env: Env;
  let agentId: string;
  before(async () => {
    env = await startEnv('require_approval = ["file_w*"]\ntimeout_secs = 60');
    agentId = await spawn(env.k, 'scribe');
  });
  after(() => stopEnv(env));

  const session = async () => (await json<{ messages: SessionMessage[] }>(await env.k.request(`/api/agents/${agentId}/session`))).messages;

  /** Rejects and waits for the turn that tells the agent (it takes a scripted reply of its own). */
  async function reject(id: string): Promise<void> {
    env.fake.enqueue({ text: `Understood ${id}.` });
    await env.k.request(`/api/approvals/${id}/reject`, { method: 'POST', json: {} });
    await waitFor(async () => (await session()).at(-1)?.content === `Understood ${id}.`, 3000, 'the turn after the rejection');
  }

  const pending = async () => (await json<{ approvals: Approval[] }>(await env.k.request(`/api/approvals?agent_id=${agentId}&status=pending`))).approvals;

  test('the stream reports a held call as approval_pending (before its tool_result), and the list filters by agent and status', async () => {
    env.fake.enqueue({ toolCalls: [{ id: 'call_s1', name: 'file_write', input: { path: 's.txt', content: 'x' } }] }, { text: 'Waiting for you.' });
    const res = await env.k.request(`/api/agents/${agentId}/message/stream`, { method: 'POST', json: { message: 'write s' } });
    const list = events(await res.text());
    const names = list.map((e) => e.event);
    const held = list.find((e) => e.event === 'approval_pending');
    assert.ok(held, `an approval_pending event (got ${names.join(', ')})`);
    assert.ok(names.indexOf('approval_pending') < names.indexOf('tool_result'), 'before the call’s tool_result');
    const [approval] = await pending();
    assert.deepEqual(held.data, {
      tool: 'file_write',
      input: { path: 's.txt', content: 'x' },
      tool_use_id: 'call_s1',
      approval_id: approval.id,
      expires_at: (await json<{ expires_at: string }>(await env.k.request(`/api/approvals/${approval.id}`))).expires_at,
    });
    assert.equal(approval.payload.call_id, 'call_s1', 'the request names the call it holds');
    const other = await env.k.request(`/api/approvals?agent_id=${agentId}&status=approved`);
    assert.equal((await json<{ total: number }>(other)).total, 0);
    assert.equal((await env.k.request('/api/approvals?status=maybe')).status, 400, 'an unknown status is refused');
    assert.equal((await env.k.request('/api/approvals?agent_id=nope')).status, 400, 'a malformed agent id is refused');
    await reject(approval.id);
  });

  test('the same call asked again while it waits joins its request; another input makes a new one', async () => {
    const write = { path: 'd.txt', content: 'same' };
    env.fake.enqueue(
      { toolCalls: [{ id: 'call_d1', name: 'file_write', input: write }] },
      { toolCalls: [{ id: 'call_d2', name: 'file_write', input: { content: 'same', path: 'd.txt' } }] },
      { text: 'Still waiting.' },
    );
    await env.k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'write d' } });
    const requests = await pending();
    assert.equal(requests.length, 1, 'one request for the repeated call');
    assert.match(sent(env.fake), /You asked for this same call again: it is the same request/);
    assert.ok(sent(env.fake).includes(`request ${requests[0].id}`));
    env.fake.enqueue({ toolCalls: [{ id: 'call_d3', name: 'file_write', input: { path: 'd.txt', content: 'other' } }] }, { text: 'Asked.' });
    await env.k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'write other' } });
    assert.equal((await pending()).length, 2, 'a different input is a different request');
    for (const a of await pending()) await reject(a.id);
  });

  test('after approval the result is the call’s result in the session, not a user message; attach reports approval_result', async () => {
    const before = (await session()).length;
    env.fake.enqueue({ toolCalls: [{ id: 'call_h1', name: 'file_write', input: { path: 'h.txt', content: 'hello' } }] }, { text: 'Asked for approval.' });
    await env.k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'write h' } });
    const [approval] = await pending();
    env.fake.enqueue({ text: 'Done: the file is written.' });
    const attach = await env.k.request(`/api/agents/${agentId}/attach`);
    await env.k.request(`/api/approvals/${approval.id}/approve`, { method: 'POST', json: {} });
    const stream = events(await attach.text());
    const result = stream.find((e) => e.event === 'approval_result');
    assert.ok(result, `an approval_result event (got ${stream.map((e) => e.event).join(', ')})`);
    assert.equal(result.data.tool_use_id, 'call_h1');
    assert.equal(result.data.approval_id, approval.id);
    assert.equal(result.data.status, 'approved');
    assert.equal(result.data.is_error, false);
    assert.match(String(result.data.content), /A human approved your file_write call; it ran/);
    const reply = stream.filter((e) => e.event === 'chunk').map((e) => String(e.data.content));
    assert.equal(reply.join(''), 'Done: the file is written.', 'the reply streams on');

    const added = (await session()).slice(before);
    for (const m of added.filter((m) => m.role === 'User')) {
      assert.equal(m.content.includes('A human approved'), false, `no user message carries the outcome: ${JSON.stringify(m)}`);
    }
    const users = added.filter((m) => m.role === 'User' && m.content);
    assert.deepEqual(
      users.map((m) => m.content),
      ['write h'],
      'the only words from the user are what they typed',
    );
    const call = added.find((m) => m.tool_calls?.some((c) => c.id === 'held-call_h1'));
    assert.ok(call, 'the call again, under the held call’s id with the prefix');
    const answer = added.flatMap((m) => m.tool_results ?? []).find((r) => r.tool_use_id === 'held-call_h1');
    assert.ok(answer && !answer.is_error && answer.content.includes('A human approved'), 'its outcome as the tool’s result');
    assert.equal(added[added.length - 1].content, 'Done: the file is written.');
  });
});

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@talon/testing';
import { json, sent, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

interface Approval {
  id: string;
  notified: boolean | null;
  payload: { input: { path?: string } };
}

describe('approvals: humans are told, and the agent learns whether they were', () => {
  let env: Env;
  let agentId: string;
  let failPushes = false;
  const pushed: Array<{ topic: string; title: string; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      pushed.push({ topic: (req.url ?? '').slice(1), title: String(req.headers.title), body });
      res.writeHead(failPushes ? 503 : 200).end();
    });
  });
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const ntfy = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    env = await startEnv(
      `require_approval = ["file_w*"]\n[pairing]\nenabled = true\npush_provider = "ntfy"\nntfy_url = "${ntfy}"\nallow_hosts = ["127.0.0.1"]\n`,
      ['pairing'],
    );
    agentId = await spawn(env.k, 'pusher');
  });
  after(async () => {
    await stopEnv(env);
    server.close();
  });

  /** Makes the agent call a gated tool; returns the tool result the model was given and the request. */
  async function gatedCall(file: string): Promise<{ toolResult: string; approval: Approval }> {
    env.fake.enqueue({ toolCalls: [{ name: 'file_write', input: { path: file, content: 'x' } }] }, { text: 'asked' });
    const res = await env.k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: `write ${file}` } });
    assert.equal(res.status, 200);
    const list = await json<{ approvals: Approval[] }>(await env.k.request('/api/approvals'));
    const approval = list.approvals.find((a) => a.payload.input.path === file)!;
    // The session's history holds earlier results too: take this request's result alone (it holds no quote).
    const toolResult = new RegExp(`waiting for human approval \\(request ${approval.id}[^"]*`).exec(sent(env.fake))?.[0] ?? '';
    assert.ok(toolResult, 'the model got the waiting result');
    return { toolResult, approval };
  }

  test('no paired device: the agent is told no human was notified and the request waits in the inbox', async () => {
    const { toolResult, approval } = await gatedCall('none.txt');
    assert.match(toolResult, /No human was notified \(no paired device\)/);
    assert.match(toolResult, /approvals inbox \(GET \/api\/approvals\)/);
    assert.equal(approval.notified, false);
  });

  test('a paired device that gets the push: the agent is told the owners were notified, with how to decide', async () => {
    const code = await json<{ pairing_code: string }>(await env.k.request('/api/pairing/request', { method: 'POST' }));
    await env.k.request('/api/pairing/complete', { method: 'POST', json: { pairing_code: code.pairing_code, push_token: 'owner-phone' } });
    const { toolResult, approval } = await gatedCall('one.txt');
    assert.doesNotMatch(toolResult, /No human was notified/);
    assert.match(toolResult, /The owners were notified/);
    assert.equal(approval.notified, true);
    const got = pushed.find((p) => p.body.includes(approval.id))!;
    assert.equal(got.topic, 'owner-phone');
    assert.equal(got.title, 'Approval needed');
    assert.match(got.body, /pusher wants to run file_write/);
    assert.match(got.body, new RegExp(`POST /api/approvals/${approval.id}/approve`));
  });

  test('every push fails: the agent is told no human was notified', async () => {
    failPushes = true;
    try {
      const { toolResult, approval } = await gatedCall('failed.txt');
      assert.match(toolResult, /No human was notified \(every push failed \(1\)\)/);
      assert.equal(approval.notified, false);
    } finally {
      failPushes = false;
    }
  });

  test('a request made through the API is pushed too; GET shows notified once the push is done', async () => {
    const res = await env.k.request('/api/approvals', { method: 'POST', json: { agent_id: agentId, action: 'deploy', description: 'pusher wants to deploy' } });
    assert.equal(res.status, 201);
    const { id } = await json<{ id: string }>(res);
    await waitFor(() => pushed.find((p) => p.body.includes(id)), 3000, 'the push');
    await waitFor(async () => (await json<Approval>(await env.k.request(`/api/approvals/${id}`))).notified === true, 3000, 'notified: true');
  });
});

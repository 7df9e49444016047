import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';

const manifest = (name: string) =>
  `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\nsystem_prompt = "You are ${name}."\n\n[capabilities]\ntools = ["agent_send"]\n`;

describe('agent_send through the real agent loop', () => {
  let k: AgentTestKernel;
  let a: string;
  before(async () => {
    k = await startAgentTestKernel({ only: ['tools', 'error-envelope'] });
    for (const name of ['alpha', 'beta']) {
      const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest(name) } });
      assert.equal(res.status, 201, await res.clone().text());
      if (name === 'alpha') a = ((await res.json()) as { agent_id: string }).agent_id;
    }
  });
  after(async () => {
    await k?.stop();
  });

  it("returns the target's reply to the caller's loop", async () => {
    k.fake.enqueue(
      { toolCalls: [{ name: 'agent_send', input: { agent_id: 'beta', message: 'ping' } }] },
      { text: 'pong from beta' },
      { text: 'beta said pong' },
    );
    const res = await k.request(`/api/agents/${a}/message`, { method: 'POST', json: { message: 'ask beta' } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { response: string }).response, 'beta said pong');
    // The caller's second model call carries the tool result: beta's reply.
    assert.match(JSON.stringify(k.fake.requests.at(-1)?.body), /pong from beta/);
    assert.match(JSON.stringify(k.fake.requests.at(-2)?.body), /ping/);
  });

  it("stopping the caller stops the target's turn", async () => {
    k.fake.enqueue({ toolCalls: [{ name: 'agent_send', input: { agent_id: 'beta', message: 'slow' } }] }, { text: 'too late', delayMs: 5000 });
    const started = Date.now();
    const pending = k.request(`/api/agents/${a}/message`, { method: 'POST', json: { message: 'ask beta slowly' } });
    const seen = k.fake.requests.length;
    await waitFor(() => k.fake.requests.length >= seen + 2, 4000, "beta's model call");
    assert.equal(k.fake.requests.length, seen + 2, "beta's model call started");
    const stop = await k.request(`/api/agents/${a}/stop`, { method: 'POST' });
    assert.equal(stop.status, 200);
    await pending.then((r) => r.text());
    assert.ok(Date.now() - started < 4500, 'the caller did not wait for the slow target');
    await waitFor(() => k.fake.requests.at(-1)?.aborted, 2000, "the abort of beta's model call");
    assert.equal(k.fake.requests.at(-1)?.aborted, true, "beta's model call was aborted");
  });
});

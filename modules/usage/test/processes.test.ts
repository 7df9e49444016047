/**
 * Two processes on one home (two kernels in this test): the budgets each keeps in memory follow a change made by the
 * other (the change feed), and the usage either records is counted by both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

async function budget(k: TestKernel, agentId?: string): Promise<{ daily_limit_usd: number; monthly_limit_usd: number }> {
  const res = await k.request(agentId ? `/api/budget/agents/${agentId}` : '/api/budget');
  assert.equal(res.status, 200);
  return (await res.json()) as { daily_limit_usd: number; monthly_limit_usd: number };
}

test('a budget set through one process is the budget of the other; usage recorded by one is counted by both', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-usage-two-'));
  const options = { home, only: ['usage', 'llm', 'error-envelope'], heartbeatMs: 200, feedPollMs: 50 };
  const [a, b] = await Promise.all([startTestKernel(options), startTestKernel(options)]);
  try {
    // Both loaded the budgets at start; b's copy must follow a's change.
    assert.equal((await budget(b)).daily_limit_usd, 0);
    assert.equal((await a.request('/api/budget', { method: 'PUT', json: { daily_limit_usd: 3, monthly_limit_usd: 40 } })).status, 200);
    await waitFor(async () => (await budget(b)).daily_limit_usd === 3, 5_000);
    assert.equal((await budget(b)).monthly_limit_usd, 40);

    // An agent's budget, set through b, reaches a (no agents module: the agent is known by its usage).
    const agentId = '0b7e7f3c-5a55-4a8a-9d55-0f5b1c3f2a11';
    await a.kernel.store.run(
      "INSERT INTO usage_calls (at, agent_id, agent_name, provider, model, input_tokens, output_tokens, cost_usd, latency_ms, ok) VALUES (?, ?, 'spender', 'openai', 'm', 1, 1, 0.25, 1, 1)",
      [Date.now(), agentId],
    );
    assert.equal((await b.request(`/api/budget/agents/${agentId}`, { method: 'PUT', json: { daily_limit_usd: 7 } })).status, 200);
    await waitFor(async () => (await budget(a, agentId)).daily_limit_usd === 7, 5_000);
    for (const k of [a, b]) {
      const usage = (await (await k.request('/api/usage?period=day')).json()) as { total_cost_usd: number; request_count: number };
      assert.deepEqual([usage.total_cost_usd, usage.request_count], [0.25, 1]);
    }
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    rmSync(home, { recursive: true, force: true });
  }
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startHarness, type Harness } from './harness.ts';

const ONLY = ['usage', 'agents', 'catalog', 'llm', 'llm-openai', 'error-envelope'];

interface Budget {
  daily_limit_usd: number;
  monthly_limit_usd: number;
  today_spent_usd: number;
  month_spent_usd: number;
  status: string;
}

describe('budgets and hourly token quotas', () => {
  let h: Harness;
  let home: string;
  let spender: string;
  let other: string;
  let capped: string;

  before(async () => {
    home = mkdtempSync(path.join(tmpdir(), 'talon-usage-budget-'));
    h = await startHarness(ONLY, '[usage]\nmonthly_limit_usd = 50\n', home);
    spender = await h.spawn('spender');
    other = await h.spawn('other');
    capped = await h.spawn('capped', 'max_llm_tokens_per_hour = 100\n');
  });
  after(async () => {
    await h.stop();
    rmSync(home, { recursive: true, force: true });
  });

  const send = (id: string, message = 'hi') =>
    h.json<{ error?: unknown; response?: string }>(`/api/agents/${id}/message`, { method: 'POST', json: { message } });

  it('reports the configured default budget', async () => {
    const res = await h.json<Budget>('/api/budget');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { daily_limit_usd: 0, monthly_limit_usd: 50, today_spent_usd: 0, month_spent_usd: 0, status: 'ok' });
  });

  it('validates PUT /api/budget', async () => {
    for (const body of [{ daily_limit_usd: -1 }, { daily_limit_usd: 'ten' }, {}, { monthly_limit_usd: null }]) {
      const res = await h.json<{ error: unknown }>('/api/budget', { method: 'PUT', json: body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(typeof res.body.error, 'string');
    }
    const bad = await h.kernel.request('/api/budget', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"daily' });
    assert.equal(bad.status, 400);
  });

  it('refuses an absurd budget (1e308, more than a million USD, negative) with the allowed range, global and per agent', async () => {
    for (const path of ['/api/budget', `/api/budget/agents/${spender}`]) {
      for (const [key, value] of [
        ['daily_limit_usd', 1e308],
        ['monthly_limit_usd', 1_000_001],
        ['daily_limit_usd', -1],
      ] as const) {
        const res = await h.json<{ error: string }>(path, { method: 'PUT', json: { [key]: value } });
        assert.equal(res.status, 400, `${path} ${key}=${value}`);
        assert.equal(res.body.error, `invalid value for 'body/${key}': a number of USD from 0 (unlimited) to 1000000`);
      }
      assert.equal((await h.json<Budget>(path, { method: 'PUT', json: { monthly_limit_usd: 1_000_000 } })).status, 200, path);
      assert.equal((await h.json<Budget>(path, { method: 'PUT', json: { monthly_limit_usd: 50 } })).status, 200, path);
    }
  });

  it('refuses a call over the global daily budget before the provider is called (402)', async () => {
    h.fake.enqueue({ text: 'spent', usage: { input: 1_000_000, output: 0 } }); // $0.15 at gpt-4o-mini prices
    assert.equal((await send(spender)).status, 200);
    const put = await h.json<Budget>('/api/budget', { method: 'PUT', json: { daily_limit_usd: 0.1 } });
    assert.equal(put.status, 200);
    assert.equal(put.body.daily_limit_usd, 0.1);
    assert.equal(put.body.monthly_limit_usd, 50, 'an omitted limit keeps its value');
    assert.equal(put.body.status, 'exceeded');
    assert.ok(Math.abs(put.body.today_spent_usd - 0.15) < 1e-9);
    const before = h.fake.requests.length;
    const refused = await send(other);
    assert.equal(refused.status, 402);
    assert.match(String(refused.body.error), /daily budget/);
    assert.equal(h.fake.requests.length, before, 'the provider saw no request');
  });

  it('turns the status to warning near a limit and 0 means unlimited', async () => {
    const warn = await h.json<Budget>('/api/budget', { method: 'PUT', json: { daily_limit_usd: 0.17 } });
    assert.equal(warn.body.status, 'warning');
    const open = await h.json<Budget>('/api/budget', { method: 'PUT', json: { daily_limit_usd: 0, monthly_limit_usd: 0 } });
    assert.equal(open.body.status, 'ok');
    assert.equal((await send(other)).status, 200);
  });

  it('validates agent ids: 400 for a non-UUID, 404 for an unknown agent', async () => {
    assert.equal((await h.json('/api/budget/agents/not-a-uuid')).status, 400);
    assert.equal((await h.json('/api/budget/agents/not-a-uuid', { method: 'PUT', json: { daily_limit_usd: 1 } })).status, 400);
    const unknown = randomUUID();
    const got = await h.json<{ error: unknown }>(`/api/budget/agents/${unknown}`);
    assert.equal(got.status, 404);
    assert.equal(typeof got.body.error, 'string');
    assert.equal((await h.json(`/api/budget/agents/${unknown}`, { method: 'PUT', json: { daily_limit_usd: 1 } })).status, 404);
    assert.equal((await h.json(`/api/budget/agents/${spender}`, { method: 'PUT', json: { daily_limit_usd: -2 } })).status, 400);
  });

  it("refuses a call over an agent's own budget, other agents unaffected", async () => {
    const put = await h.json<Budget & { agent_id: string; agent_name: string }>(`/api/budget/agents/${spender}`, {
      method: 'PUT',
      json: { daily_limit_usd: 0.05, monthly_limit_usd: 10 },
    });
    assert.equal(put.status, 200);
    assert.equal(put.body.agent_id, spender);
    assert.equal(put.body.agent_name, 'spender');
    assert.equal(put.body.daily_limit_usd, 0.05);
    assert.equal(put.body.status, 'exceeded');
    const got = await h.json<Budget>(`/api/budget/agents/${spender}`);
    assert.deepEqual(got.body, put.body);
    const before = h.fake.requests.length;
    const refused = await send(spender);
    assert.equal(refused.status, 402);
    assert.match(String(refused.body.error), /spender/);
    assert.equal(h.fake.requests.length, before);
    assert.equal((await send(other)).status, 200);
  });

  it('refuses a call over max_llm_tokens_per_hour with 429 before the provider is called', async () => {
    h.fake.enqueue({ text: 'big', usage: { input: 90, output: 30 } });
    assert.equal((await send(capped)).status, 200);
    const view = await h.json<{ max_llm_tokens_per_hour: number; hourly_tokens_used: number }>(`/api/budget/agents/${capped}`);
    assert.equal(view.body.max_llm_tokens_per_hour, 100);
    assert.equal(view.body.hourly_tokens_used, 120);
    const before = h.fake.requests.length;
    const refused = await send(capped);
    assert.equal(refused.status, 429);
    assert.match(String(refused.body.error), /hourly token quota/);
    assert.equal(h.fake.requests.length, before);
  });

  it('keeps budgets across a restart', async () => {
    await h.kernel.stop();
    await h.fake.stop();
    h = await startHarness(ONLY, '[usage]\nmonthly_limit_usd = 50\n', home);
    const global = await h.json<Budget>('/api/budget');
    assert.equal(global.body.daily_limit_usd, 0);
    assert.equal(global.body.monthly_limit_usd, 0);
    const agent = await h.json<Budget>(`/api/budget/agents/${spender}`);
    assert.equal(agent.status, 200);
    assert.equal(agent.body.daily_limit_usd, 0.05);
    assert.equal(agent.body.monthly_limit_usd, 10);
  });
});

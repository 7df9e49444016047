import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { catalogService, type CatalogService } from '@talon/catalog';
import { startHarness, type Harness } from './harness.ts';

const ONLY = ['usage', 'agents', 'catalog', 'llm', 'llm-openai', 'error-envelope'];

interface Totals {
  period: string;
  total_input_tokens: number;
  total_output_tokens: number;
  total_cost_usd: number;
  request_count: number;
  active_agents: number;
}

describe('usage metering and analytics', () => {
  let h: Harness;
  let alpha: string;
  let beta: string;
  let price: { input: number; output: number };

  before(async () => {
    h = await startHarness(ONLY);
    alpha = await h.spawn('alpha');
    beta = await h.spawn('beta');
    const model = h.kernel.kernel.services.view<CatalogService>(catalogService.id).model('gpt-4o-mini');
    assert.ok(model, 'the catalogue knows gpt-4o-mini');
    price = { input: model.input_cost_per_1m, output: model.output_cost_per_1m };
    assert.ok(price.input > 0 && price.output > 0);
  });
  after(() => h.stop());

  const cost = (input: number, output: number) => (input * price.input + output * price.output) / 1_000_000;

  it('starts empty', async () => {
    const res = await h.json<Totals>('/api/usage');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      period: 'day',
      total_input_tokens: 0,
      total_output_tokens: 0,
      total_cost_usd: 0,
      request_count: 0,
      active_agents: 0,
      by_purpose: [],
    });
  });

  it('meters each upstream call with tokens and the catalogue price', async () => {
    h.fake.enqueue({ text: 'one', usage: { input: 1000, output: 500 } });
    assert.equal((await h.json(`/api/agents/${alpha}/message`, { method: 'POST', json: { message: 'hi' } })).status, 200);
    h.fake.enqueue({ text: 'two', usage: { input: 2000, output: 100 } });
    assert.equal((await h.json(`/api/agents/${beta}/message`, { method: 'POST', json: { message: 'hi' } })).status, 200);
    for (const period of ['hour', 'day', 'week', 'month']) {
      const res = await h.json<Totals>(`/api/usage?period=${period}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.period, period);
      assert.equal(res.body.total_input_tokens, 3000);
      assert.equal(res.body.total_output_tokens, 600);
      assert.equal(res.body.request_count, 2);
      assert.equal(res.body.active_agents, 2);
      assert.ok(Math.abs(res.body.total_cost_usd - (cost(1000, 500) + cost(2000, 100))) < 1e-9, `cost ${res.body.total_cost_usd}`);
    }
  });

  it('rejects an unknown period with 400', async () => {
    const res = await h.json<{ error: unknown }>('/api/usage?period=year');
    assert.equal(res.status, 400);
    assert.equal(typeof res.body.error, 'string');
  });

  it('meters failed calls too (a turn without a visible reply)', async () => {
    h.fake.enqueue({ status: 500 });
    const turn = await h.json(`/api/agents/${alpha}/message`, { method: 'POST', json: { message: 'fail please' } });
    assert.ok(turn.status >= 500, `turn status ${turn.status}`);
    // The rows are written behind: a read of the API flushes them.
    assert.equal((await h.json<Totals>('/api/usage')).body.request_count, 3);
    const rows = await h.kernel.kernel.store.many<{ ok: number; error: string | null; agent_id: string; purpose: string }>(
      'SELECT ok, error, agent_id, purpose FROM usage_calls ORDER BY id',
    );
    assert.equal(rows.length, 3);
    assert.equal(rows[2].ok, 0);
    assert.ok(rows[2].error);
    assert.equal(rows[2].agent_id, alpha);
    assert.equal(rows[0].ok, 1);
  });

  it('summarises today and the hourly quota', async () => {
    const res = await h.json<{ today: Record<string, number>; quota: { hourly_token_limit: number; hourly_tokens_used: number; hourly_reset_at: string } }>(
      '/api/usage/summary',
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.today.input_tokens, 3000);
    assert.equal(res.body.today.output_tokens, 600);
    assert.equal(res.body.today.requests, 3);
    assert.ok(Math.abs(res.body.today.cost_usd - (cost(1000, 500) + cost(2000, 100))) < 1e-9);
    assert.equal(res.body.quota.hourly_token_limit, 0);
    assert.equal(res.body.quota.hourly_tokens_used, 3600);
    const reset = Date.parse(res.body.quota.hourly_reset_at);
    assert.ok(reset > Date.now() && reset <= Date.now() + 3_600_000);
    assert.equal(new Date(reset).getUTCMinutes(), 0);
  });

  it('breaks usage down by model', async () => {
    const res = await h.json<{ models: Array<Record<string, unknown>> }>('/api/usage/by-model');
    assert.equal(res.status, 200);
    assert.equal(res.body.models.length, 1);
    const m = res.body.models[0];
    assert.equal(m.model, 'gpt-4o-mini');
    assert.equal(m.provider, 'openai');
    assert.equal(m.input_tokens, 3000);
    assert.equal(m.output_tokens, 600);
    assert.equal(m.request_count, 3);
    assert.ok(Math.abs((m.cost_usd as number) - (cost(1000, 500) + cost(2000, 100))) < 1e-9);
  });

  it('breaks usage down per day, zero-filled, with ?days=', async () => {
    // A call recorded three days ago (written straight into the table: the clock is not ours to move).
    const threeDaysAgo = Date.now() - 3 * 86_400_000;
    await h.kernel.kernel.store.run(
      "INSERT INTO usage_calls (at, provider, model, input_tokens, output_tokens, cost_usd, latency_ms, ok) VALUES (?, 'openai', 'gpt-4o-mini', 10, 20, 0.5, 1, 1)",
      [threeDaysAgo],
    );
    const res = await h.json<{ days: Array<{ date: string; input_tokens: number; output_tokens: number; cost_usd: number; requests: number }> }>(
      '/api/usage/daily?days=5',
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.days.length, 5);
    assert.equal(res.body.days[4].date, new Date().toISOString().slice(0, 10));
    assert.equal(res.body.days[4].requests, 3);
    assert.deepEqual(res.body.days[1], {
      date: new Date(threeDaysAgo).toISOString().slice(0, 10),
      input_tokens: 10,
      output_tokens: 20,
      cost_usd: 0.5,
      requests: 1,
    });
    assert.equal(res.body.days[0].requests, 0);
    assert.equal((await h.json<{ days: unknown[] }>('/api/usage/daily')).body.days.length, 7);
    // More than a year is capped at 366 days, not refused; a non-number or less than a day is still refused.
    const capped = await h.json<{ days: unknown[] }>('/api/usage/daily?days=5000');
    assert.equal(capped.status, 200);
    assert.equal(capped.body.days.length, 366);
    for (const bad of ['0', 'abc', '2.5']) assert.equal((await h.json(`/api/usage/daily?days=${bad}`)).status, 400, bad);
    // The day window only counts today.
    assert.equal((await h.json<Totals>('/api/usage?period=day')).body.request_count, 3);
    assert.equal((await h.json<Totals>('/api/usage?period=month')).body.request_count >= 3, true);
  });

  it('ranks agents by spend', async () => {
    const res = await h.json<Array<{ agent_id: string; agent_name: string; total_cost_usd: number; today_cost_usd: number }>>('/api/budget/agents');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.map((r) => r.agent_name),
      cost(2000, 100) > cost(1000, 500) ? ['beta', 'alpha'] : ['alpha', 'beta'],
    );
    const a = res.body.find((r) => r.agent_id === alpha)!;
    assert.ok(Math.abs(a.total_cost_usd - cost(1000, 500)) < 1e-9);
    assert.ok(Math.abs(a.today_cost_usd - cost(1000, 500)) < 1e-9);
  });

  it("breaks the period's usage down by purpose, so background calls show apart from turns", async () => {
    // A memory extraction call as the llm module records it (the memory module's own tests make real ones).
    await h.kernel.kernel.store.run(
      "INSERT INTO usage_calls (at, agent_id, purpose, provider, model, input_tokens, output_tokens, cost_usd, latency_ms, ok) VALUES (?, ?, 'memory_extraction', 'openai', 'gpt-4o-mini', 300, 40, 0.25, 1, 1)",
      [Date.now(), alpha],
    );
    type Row = { purpose: string | null; input_tokens: number; output_tokens: number; cost_usd: number; request_count: number };
    const res = await h.json<Totals & { by_purpose: Row[] }>('/api/usage?period=hour');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.by_purpose.map((r) => [r.purpose, r.input_tokens, r.output_tokens, r.request_count]),
      [
        ['memory_extraction', 300, 40, 1],
        ['turn', 3000, 600, 3],
      ],
      'most expensive first; the failed turn call counts as a request',
    );
    assert.equal(res.body.by_purpose[0].cost_usd, 0.25);
    assert.ok(Math.abs(res.body.by_purpose[1].cost_usd - (cost(1000, 500) + cost(2000, 100))) < 1e-9);
    assert.equal(res.body.request_count, 4);
  });
});

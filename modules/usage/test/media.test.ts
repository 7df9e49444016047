/**
 * Media metering: each media call (mediaHooks.afterCall) is a usage row priced from the catalogue's media prices, and
 * media calls are checked against the budgets (mediaHooks.beforeCall). The hooks are called as the media module calls
 * them, and once through a real media call (POST /api/media/image, a test driver named 'openai').
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { eventChannel, setConfig, waitFor } from '@talon/testing';
import { mediaHooks, type MediaCallRecord } from '@talon/media';
import { usageEvents } from '@talon/usage';
import { startHarness, type Harness } from './harness.ts';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const ONLY = ['usage', 'agents', 'catalog', 'llm', 'llm-openai', 'media', 'media-priced', 'error-envelope'];

/** Every provider key a run might inherit is cleared first: no test reaches a real, billed provider. */
function clearProviderEnv(): void {
  for (const key of Object.keys(process.env)) if (/_API_KEY$|^GOOGLE_CLOUD|^MINIMAX_/.test(key) && key !== 'TALON_TEST_FAKE_KEY') delete process.env[key];
}

interface Row {
  kind: string;
  provider: string;
  model: string;
  units: number | null;
  unit: string | null;
  cost_usd: number;
  unpriced: number;
  ok: number;
  purpose: string | null;
  agent_id: string | null;
}

interface MediaItem {
  kind: string;
  provider: string;
  model: string;
  unit: string | null;
  units: number;
  cost_usd: number;
  request_count: number;
  unpriced_count: number;
}

const near = (a: number, b: number) => Math.abs(a - b) < 1e-9;

describe('media metering and budgets', () => {
  let h: Harness;
  let hooks: ReturnType<typeof mediaHooks.create>;
  let agent: string;

  before(async () => {
    clearProviderEnv();
    h = await startHarness(ONLY, `module_paths = [${JSON.stringify(FIXTURES)}]\n`);
    for (const key of Object.keys(process.env)) assert.ok(!/^(OPENAI|GEMINI|GOOGLE|ELEVENLABS|MINIMAX|GROQ)_API_KEY$/.test(key), `${key} leaked into the test`);
    hooks = h.kernel.kernel.hooks.catalogue(mediaHooks.id)!.hooks as ReturnType<typeof mediaHooks.create>;
    agent = await h.spawn('painter');
  });
  after(() => h.stop());

  const record = (r: Partial<MediaCallRecord> & Pick<MediaCallRecord, 'kind' | 'provider' | 'model' | 'units' | 'unit'>) =>
    hooks.afterCall.promise({ latencyMs: 12, ok: true, ...r });
  /** The usage rows of media calls, oldest first (written behind: a read of the API flushes them). */
  const rows = async (): Promise<Row[]> => {
    await h.json('/api/usage');
    return h.kernel.kernel.store.many<Row>(
      "SELECT kind, provider, model, units, unit, cost_usd, unpriced, ok, purpose, agent_id FROM usage_calls WHERE kind <> 'llm' ORDER BY id",
    );
  };
  const last = async () => (await rows()).at(-1)!;

  it('prices a media call from the catalogue: units times the list price, and counts it in every total', async () => {
    await record({ kind: 'image', provider: 'openai', model: 'dall-e-3', units: 2, unit: 'images', agentId: agent });
    const row = await last();
    assert.deepEqual(
      { ...row, cost_usd: undefined },
      {
        kind: 'image',
        provider: 'openai',
        model: 'dall-e-3',
        units: 2,
        unit: 'images',
        cost_usd: undefined,
        unpriced: 0,
        ok: 1,
        purpose: 'media.image',
        agent_id: agent,
      },
    );
    assert.ok(near(row.cost_usd, 0.08), `cost ${row.cost_usd}`);
    const totals = await h.json<{
      total_cost_usd: number;
      request_count: number;
      active_agents: number;
      by_purpose: Array<{ purpose: string; cost_usd: number }>;
    }>('/api/usage');
    assert.ok(near(totals.body.total_cost_usd, 0.08));
    assert.equal(totals.body.request_count, 1);
    assert.equal(totals.body.active_agents, 1);
    assert.ok(near(totals.body.by_purpose.find((p) => p.purpose === 'media.image')!.cost_usd, 0.08));
    const byModel = await h.json<{ models: Array<{ model: string; provider: string; cost_usd: number; request_count: number }> }>('/api/usage/by-model');
    const dalle = byModel.body.models.find((m) => m.model === 'dall-e-3')!;
    assert.equal(dalle.provider, 'openai');
    assert.equal(dalle.request_count, 1);
    assert.ok(near(dalle.cost_usd, 0.08));
    const summary = await h.json<{ today: { cost_usd: number; requests: number } }>('/api/usage/summary');
    assert.ok(near(summary.body.today.cost_usd, 0.08));
    const daily = await h.json<{ total_cost_usd: number }>('/api/usage/daily?days=1');
    assert.ok(near(daily.body.total_cost_usd, 0.08));
    const ranking = await h.json<Array<{ agent_id: string; total_cost_usd: number }>>('/api/budget/agents');
    assert.ok(near(ranking.body.find((r) => r.agent_id === agent)!.total_cost_usd, 0.08), 'the agent is charged');
  });

  it('records an unknown model, or a price in another unit, at cost 0 and flags it unpriced', async () => {
    await record({ kind: 'image', provider: 'openai', model: 'dall-e-9', units: 1, unit: 'images' });
    assert.deepEqual([(await last()).cost_usd, (await last()).unpriced], [0, 1]);
    // tts-1 is priced per character: seconds of it cannot be priced.
    await record({ kind: 'speech', provider: 'openai', model: 'tts-1', units: 3.5, unit: 'seconds' });
    assert.deepEqual([(await last()).cost_usd, (await last()).unpriced], [0, 1]);
    // whisper-1 is OpenAI's: on Groq the model is not priced.
    await record({ kind: 'transcription', provider: 'groq', model: 'whisper-1', units: 60, unit: 'seconds' });
    assert.deepEqual([(await last()).cost_usd, (await last()).unpriced], [0, 1]);
    await record({ kind: 'transcription', provider: 'groq', model: 'whisper-large-v3-turbo', units: 3600, unit: 'seconds' });
    const turbo = await last();
    assert.equal(turbo.unpriced, 0);
    assert.ok(near(turbo.cost_usd, 3600 * 0.0000111), `cost ${turbo.cost_usd}`);
  });

  it('local costs 0 and is not unpriced; a failed call that used nothing is not unpriced either', async () => {
    await record({ kind: 'speech', provider: 'local', model: 'flite-rms', units: 120, unit: 'characters' });
    assert.deepEqual([(await last()).cost_usd, (await last()).unpriced], [0, 0]);
    await record({ kind: 'video', provider: 'minimax', model: 'no-such-video-model', units: 0, unit: 'seconds', ok: false, error: 'cancelled' });
    const failed = await last();
    assert.deepEqual([failed.cost_usd, failed.unpriced, failed.ok], [0, 0, 0]);
  });

  it('GET /api/usage/media: media spend per kind, provider, model and unit; model calls are not in it', async () => {
    h.fake.enqueue({ text: 'a model call', usage: { input: 1000, output: 100 } });
    assert.equal((await h.json(`/api/agents/${agent}/message`, { method: 'POST', json: { message: 'hi' } })).status, 200);
    const res = await h.json<{ period: string; total_cost_usd: number; request_count: number; unpriced_count: number; items: MediaItem[] }>(
      '/api/usage/media?period=month',
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.period, 'month');
    assert.deepEqual(res.body.items[0], {
      kind: 'image',
      provider: 'openai',
      model: 'dall-e-3',
      unit: 'images',
      units: 2,
      cost_usd: 0.08,
      request_count: 1,
      unpriced_count: 0,
    });
    assert.equal(res.body.request_count, 7);
    assert.equal(res.body.unpriced_count, 3);
    assert.ok(near(res.body.total_cost_usd, 0.08 + 3600 * 0.0000111));
    assert.ok(res.body.items.every((i) => i.kind !== 'llm'));
    assert.equal((await h.json('/api/usage/media?period=year')).status, 400);
    const totals = await h.json<{ request_count: number; total_input_tokens: number }>('/api/usage');
    assert.equal(totals.body.request_count, 8, 'model and media calls are counted together');
    assert.equal(totals.body.total_input_tokens, 1000, 'media calls add no tokens');
  });

  it('a real media call is metered: POST /api/media/image through the media module', async () => {
    const before = (await rows()).length;
    const res = await h.json<{ provider: string; model: string; images: unknown[] }>('/api/media/image', {
      method: 'POST',
      json: { prompt: 'a lighthouse', provider: 'openai', count: 3 },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.images.length, 3);
    await waitFor(async () => (await rows()).length > before, 2000, 'the media row');
    const row = await last();
    assert.deepEqual([row.kind, row.provider, row.model, row.units, row.unit, row.unpriced], ['image', 'openai', 'dall-e-3', 3, 'images', 0]);
    assert.ok(near(row.cost_usd, 0.12), `cost ${row.cost_usd}`);
  });

  it('budgets refuse a media call once exceeded (402), global and per agent, and publish budget.exceeded', async () => {
    const events = eventChannel(h.kernel.kernel.events, usageEvents);
    const seen: Array<{ kind?: string; status: number; agentId?: string }> = [];
    events.subscribe('budget.exceeded', (e) => void seen.push(e.data));
    try {
      assert.equal(await hooks.beforeCall.promise({ kind: 'image', provider: 'openai', model: 'dall-e-3' }), undefined, 'no budget: no refusal');
      // Spent today: 0.08 + 0.12 + 0.04 (Groq) ≈ 0.24. A global daily budget of 0.2 is exceeded.
      assert.equal((await h.json('/api/budget', { method: 'PUT', json: { daily_limit_usd: 0.2 } })).status, 200);
      const refused = await hooks.beforeCall.promise({ kind: 'video', provider: 'gemini', model: 'veo-2.0-generate-001' });
      assert.equal(refused?.status, 402);
      assert.match(refused?.error ?? '', /^global daily budget exceeded: \$0\.2\d+ spent of \$0\.2$/);
      const http = await h.json<{ error: string }>('/api/media/image', { method: 'POST', json: { prompt: 'another', provider: 'openai' } });
      assert.equal(http.status, 402);
      assert.match(http.body.error, /global daily budget exceeded/);
      // The agent's own budget: its 0.08 passes an agent limit of 0.05, another agent's calls do not count.
      assert.equal((await h.json('/api/budget', { method: 'PUT', json: { daily_limit_usd: 0 } })).status, 200);
      assert.equal((await h.json(`/api/budget/agents/${agent}`, { method: 'PUT', json: { daily_limit_usd: 0.05 } })).status, 200);
      const mine = await hooks.beforeCall.promise({ kind: 'speech', provider: 'openai', model: 'tts-1', agentId: agent });
      assert.equal(mine?.status, 402);
      assert.match(mine?.error ?? '', /^agent 'painter' daily budget exceeded/);
      assert.equal(await hooks.beforeCall.promise({ kind: 'speech', provider: 'openai', model: 'tts-1' }), undefined, 'a call for no agent passes');
      // The hourly token quota counts model tokens (1100 used): it does not stop media calls.
      await setConfig(h.kernel, 'usage.hourly_token_limit', 500);
      assert.equal(await hooks.beforeCall.promise({ kind: 'speech', provider: 'openai', model: 'tts-1' }), undefined, 'no token quota for media');
      await waitFor(() => seen.length >= 3, 2000, 'the budget.exceeded events');
      assert.deepEqual(
        seen.map((e) => [e.kind, e.status, e.agentId]),
        [
          ['video', 402, undefined],
          ['image', 402, undefined],
          ['speech', 402, agent],
        ],
      );
    } finally {
      events.close();
      await h.json(`/api/budget/agents/${agent}`, { method: 'PUT', json: { daily_limit_usd: 0 } });
      await setConfig(h.kernel, 'usage.hourly_token_limit', 0);
    }
  });
});

/** The services on a test store: counters written behind the turn are read back at once; the cache loads at start. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openTestStore } from '@talon/testing';
import { PromptCache } from '../services/cache.ts';
import { Versions } from '../services/versions.ts';
import { Experiments } from '../services/experiments.ts';

const AGENT = '11111111-1111-4111-8111-111111111111';

function services(opened: ReturnType<typeof openTestStore>) {
  const cache = new PromptCache(opened.store, { note: async () => undefined });
  const versions = new Versions(opened.store, () => 10, cache);
  const experiments = new Experiments(opened.store, versions, cache, (err) => assert.fail(err as Error));
  return { cache, versions, experiments };
}

test('an impression or outcome queued by a turn is in the metrics read right after it (the queue is flushed first)', async () => {
  const opened = openTestStore([path.join(import.meta.dirname, '..')]);
  try {
    const { versions, experiments } = services(opened);
    const [a, b] = [await versions.save(AGENT, { system_prompt: 'A' }), await versions.save(AGENT, { system_prompt: 'B' })];
    const created = await experiments.create(AGENT, {
      name: 'x',
      variants: [
        { name: 'a', prompt_version_id: a.id },
        { name: 'b', prompt_version_id: b.id },
      ],
    });
    await experiments.start(created.id);
    const arm = experiments.armFor(AGENT, 'session-1')!;
    experiments.impression(arm.variantId);
    experiments.outcome(arm.variantId, { win: true, costUsd: 0.5, latencyMs: 10 });
    // Same tick: the write-behind has not run yet.
    const served = (await experiments.metrics(created.id)).variants.find((v) => v.variant_id === arm.variantId)!;
    assert.deepEqual([served.impressions, served.wins, served.total_cost_usd], [1, 1, 0.5]);
  } finally {
    opened.close();
  }
});

test('a new copy of the module loads the active prompts and running experiments at start', async () => {
  const opened = openTestStore([path.join(import.meta.dirname, '..')]);
  try {
    const first = services(opened);
    const v = await first.versions.save(AGENT, { system_prompt: 'ACTIVE' });
    await first.versions.activate(v.id);
    const fresh = services(opened);
    assert.equal(fresh.versions.activePrompt(AGENT), undefined, 'nothing before load()');
    await fresh.cache.load();
    assert.equal(fresh.versions.activePrompt(AGENT), 'ACTIVE');
  } finally {
    opened.close();
  }
});

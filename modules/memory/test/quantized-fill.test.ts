/**
 * PostgreSQL keeps each vector's binary-quantised form beside it for the coarse search pass. Vectors stored without
 * it (restored from a SQLite backup, whose index was a vec0 table) get it at the module's start, so that search finds
 * them again.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { AGENT_A, json } from './helpers.ts';

const skip = process.env.TALON_TEST_DB !== 'postgres' && 'the quantised column is PostgreSQL’s (SQLite keeps a vec0 table)';
const home = mkdtempSync(path.join(tmpdir(), 'talon-memory-quantized-'));
let fake: FakeProvider;
before(async () => {
  fake = new FakeProvider();
  await fake.start();
});
after(async () => {
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

const start = () =>
  startTestKernel({
    only: ['memory', 'error-envelope'],
    home,
    config: `[memory]\nembedding_provider = "${fake.url}/v1"\nembedding_model = "fake-embed"\n`,
  });
const coarse = (k: TestKernel) => k.kernel.store.one<{ n: number; q: number }>('SELECT COUNT(*) AS n, COUNT(quantized) AS q FROM memory_embeddings');

test('vectors without their quantised form get it at the start, and the search finds them by it', { skip, timeout: 60_000 }, async () => {
  let k = await start();
  try {
    for (const content of ['The user keeps bees on the roof.', 'The user collects old maps.'])
      assert.equal((await k.request('/api/memory', { method: 'POST', json: { content, agent_id: AGENT_A } })).status, 201);
    await waitFor(async () => ((await coarse(k))!.n === 2 ? true : undefined), 5000, 'both entries embedded');
    await k.kernel.store.run('UPDATE memory_embeddings SET quantized = NULL');
    await k.stop();
    k = await start();
    assert.deepEqual(await coarse(k), { n: 2, q: 2 });
    const found = await json<{ results: Array<{ content: string }> }>(
      await k.request(`/api/memory/agents/${AGENT_A}/search?q=${encodeURIComponent('honey bees')}&limit=1`),
    );
    assert.equal(found.results[0]?.content, 'The user keeps bees on the roof.');
  } finally {
    await k.stop();
  }
});

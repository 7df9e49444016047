/**
 * Several processes on one home (two kernels on one database here) and two callers in one process: what one of them
 * creates or changes, the others see.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeProvider, startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { AGENT_A, json, memoryOnDisk, startMemoryKernel } from './helpers.ts';

let fake: FakeProvider;
before(async () => {
  fake = new FakeProvider();
  await fake.start();
});
after(() => fake.stop());

type Found = { mode: string; results: Array<{ id: string }> };

test('a vec0 table one process creates is searched by the other (its KNN pass learns the table from the change feed)', async () => {
  const k1 = await startMemoryKernel(`[memory]\nembedding_provider = "${fake.url}/v1"\nembedding_model = "fake-embed"\n`);
  let k2: TestKernel | undefined;
  try {
    // The second process starts before any vector exists: at its start there is no vec0 table to find.
    k2 = await startTestKernel({ only: ['memory', 'error-envelope'], home: k1.home });
    const created = await json<{ id: string }>(
      await k1.request('/api/memory', { method: 'POST', json: { content: 'What is it about otters and rivers', agent_id: AGENT_A } }),
    );
    await waitFor(
      async () => (await json<{ pending_embeddings: number }>(await k1.request('/api/memory/stats'))).pending_embeddings === 0,
      5000,
      'the embedding',
    );
    // Only stop words: no full-text candidate, so only the KNN pass can find the entry.
    const query = `/api/memory/agents/${AGENT_A}/search?q=${encodeURIComponent('what is it about')}`;
    const mine = await json<Found>(await k1.request(query));
    assert.deepEqual([mine.mode, mine.results.map((r) => r.id)], ['hybrid', [created.id]]);
    const other = k2;
    await waitFor(async () => (await json<Found>(await other.request(query))).results[0]?.id === created.id, 3000, 'the other process to find it');
  } finally {
    await k2?.stop();
    await k1.stop();
  }
});

test('two consolidations of one agent at once merge each duplicate once: the groups are read inside the transaction', async () => {
  const { memory, close } = await memoryOnDisk();
  try {
    for (let i = 0; i < 2; i++) await memory.entries.add({ content: 'The user prefers green tea in the morning.', agentId: AGENT_A, level: 'agent' });
    // A scheduled run and a manual trigger: the second must see what the first did, not the rows both read before.
    const [a, b] = await Promise.all([memory.consolidate(AGENT_A), memory.consolidate(AGENT_A)]);
    assert.equal(a.merged_count + b.merged_count, 1);
    const [kept] = await memory.entries.agentRows(AGENT_A);
    const { history } = await memory.entries.history(kept.id);
    assert.equal(history.filter((h) => h.reason.startsWith('consolidated from')).length, 1);
    assert.equal(kept.access_count, 0);
  } finally {
    await close();
  }
});

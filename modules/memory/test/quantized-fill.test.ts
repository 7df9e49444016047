/**
 * Each vector's binary-quantised form serves the coarse search pass: beside it on PostgreSQL, in a vec0 table per
 * dimension on SQLite. Vectors stored without it (restored from a backup made on the other engine) get it at the
 * module's start, so that search finds them again.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { AGENT_A, json } from './helpers.ts';

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
const store = (k: TestKernel) => k.kernel.store;
/** The vec0 tables (SQLite). */
const vecTables = async (k: TestKernel) =>
  (await store(k).many<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'memory_vec_[0-9]*'"))
    .map((t) => t.name)
    .filter((name) => /^memory_vec_\d+$/.test(name));

/** How many vectors there are, and how many have their quantised form. */
async function coarse(k: TestKernel): Promise<{ n: number; q: number }> {
  const n = (await store(k).one<{ n: number }>('SELECT COUNT(*) AS n FROM memory_embeddings'))!.n;
  if (store(k).dialect !== 'sqlite') return { n, q: (await store(k).one<{ q: number }>('SELECT COUNT(quantized) AS q FROM memory_embeddings'))!.q };
  let q = 0;
  for (const table of await vecTables(k)) q += (await store(k).one<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n;
  return { n, q };
}

/** Drops every vector's quantised form, as a restore from the other engine leaves them. */
async function stripQuantized(k: TestKernel): Promise<void> {
  if (store(k).dialect !== 'sqlite') await store(k).run('UPDATE memory_embeddings SET quantized = NULL');
  else for (const table of await vecTables(k)) await store(k).run(`DELETE FROM ${table}`);
  assert.equal((await coarse(k)).q, 0);
}

test('vectors without their quantised form get it at the start, and the search finds them by it', { timeout: 60_000 }, async () => {
  let k = await start();
  try {
    for (const content of ['The user keeps bees on the roof.', 'The user collects old maps.'])
      assert.equal((await k.request('/api/memory', { method: 'POST', json: { content, agent_id: AGENT_A } })).status, 201);
    await waitFor(async () => ((await coarse(k))!.n === 2 ? true : undefined), 5000, 'both entries embedded');
    await stripQuantized(k);
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

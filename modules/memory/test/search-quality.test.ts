/**
 * Search quality on a small labelled set: for each query the right entry must
 * be in the top 3 for at least 9 of 10 queries, with FTS5 alone and with
 * vectors from the fake embedding provider.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestKernel } from '@talon/testing';
import { FakeProvider, waitFor } from '@talon/testing';
import { startMemoryKernel, json, AGENT_A, AGENT_B } from './helpers.ts';

const CORPUS = [
  "The user's name is Maria Silva and she lives in Porto.",
  'The user prefers dark mode in every code editor.',
  'The user is allergic to peanuts and shellfish.',
  "The user's daughter Ana starts school in September.",
  'The team deploys the backend to Kubernetes on Fridays.',
  'The production database is PostgreSQL 16 running on AWS RDS.',
  'The user drinks green tea every morning, never coffee.',
  'The user is learning Japanese and practices kanji daily.',
  "The user's favourite football club is FC Porto.",
  'The project deadline for the mobile app is 15 March.',
  'The user runs a half marathon every spring.',
  'The CI pipeline uses GitHub Actions with a matrix of Node versions.',
  "The user's laptop is a ThinkPad running Arch Linux as its operating system.",
  'The user dislikes long meetings and prefers async updates in Slack.',
  "The user's cat is called Miso and is three years old.",
  'The API rate limit for the billing service is 100 requests per minute.',
  'The user writes code mostly in Rust and TypeScript.',
  "The user's partner is a nurse working night shifts.",
  'The user plans a trip to Kyoto in April.',
  'The staging environment resets every night at 2 am.',
];

/** [query, index of the right entry in CORPUS] */
const QUERIES: Array<[string, number]> = [
  ['is the user allergic to anything', 2],
  ['which editor theme does the user like, dark or light mode', 1],
  ['where does the user live', 0],
  ['when is the mobile app deadline', 9],
  ['what database runs in production', 5],
  ['how does the team deploy the backend', 4],
  ['what does the user drink in the morning', 6],
  ['what programming languages does the user write code in', 16],
  ["tell me about the user's pet cat", 14],
  ['which operating system is on the laptop', 12],
];

async function load(k: TestKernel): Promise<string[]> {
  const ids: string[] = [];
  for (const content of CORPUS) {
    const res = await k.request('/api/memory', { method: 'POST', json: { content, agent_id: AGENT_A, level: 'user' } });
    ids.push((await json<{ id: string }>(res)).id);
  }
  // Another agent's look-alikes must not leak into agent A's results.
  for (const content of ['The user is allergic to cats.', 'The user lives in Lisbon.', 'The mobile app deadline is in June.']) {
    await k.request('/api/memory', { method: 'POST', json: { content, agent_id: AGENT_B } });
  }
  return ids;
}

async function score(k: TestKernel, ids: string[], expectMode: string): Promise<{ hits: number; misses: string[] }> {
  let hits = 0;
  const misses: string[] = [];
  for (const [q, index] of QUERIES) {
    const res = await json<{ mode: string; results: Array<{ id: string; agent_id: string; relevance: number }> }>(
      await k.request(`/api/memory/agents/${AGENT_A}/search?q=${encodeURIComponent(q)}&limit=3`),
    );
    assert.equal(res.mode, expectMode);
    assert.ok(res.results.every((r) => r.agent_id === AGENT_A && r.relevance > 0 && r.relevance <= 1));
    if (res.results.some((r) => r.id === ids[index])) hits++;
    else misses.push(q);
  }
  return { hits, misses };
}

test('FTS5 alone: the right entry is in the top 3 for at least 9 of 10 queries', async (t) => {
  const k = await startMemoryKernel();
  try {
    const ids = await load(k);
    const { hits, misses } = await score(k, ids, 'fts5');
    t.diagnostic(`${hits}/10 in the top 3${misses.length ? `; missed: ${misses.join(' | ')}` : ''}`);
    assert.ok(hits >= 9, `only ${hits}/10; missed: ${misses.join(' | ')}`);
  } finally {
    await k.stop();
  }
});

let fake: FakeProvider;
before(async () => {
  fake = new FakeProvider();
  await fake.start();
});
after(() => fake.stop());

test('with the fake embedding provider (hybrid FTS5 + vectors): at least 9 of 10 in the top 3', async (t) => {
  const k = await startMemoryKernel(`[memory]\nembedding_provider = "${fake.url}/v1"\nembedding_model = "fake-embed"\n`);
  try {
    const ids = await load(k);
    let stats: { embedded: number; pending_embeddings: number; embedding_status: string; embedding_model: string } | undefined;
    stats = await waitFor(
      async () => {
        const now = await json<NonNullable<typeof stats>>(await k.request('/api/memory/stats'));
        return now.pending_embeddings === 0 ? now : undefined;
      },
      5000,
      'no embedding pending',
    );
    assert.equal(stats!.embedding_status, 'fts5+vector');
    assert.equal(stats!.embedding_model, 'fake-embed');
    assert.equal(stats!.embedded, CORPUS.length + 3);
    const embedCalls = fake.requests.filter((r) => r.path.endsWith('/embeddings'));
    assert.ok(embedCalls.length >= 1);
    assert.equal(embedCalls[0].body.model, 'fake-embed');
    const { hits, misses } = await score(k, ids, 'hybrid');
    t.diagnostic(`${hits}/10 in the top 3${misses.length ? `; missed: ${misses.join(' | ')}` : ''}`);
    assert.ok(hits >= 9, `only ${hits}/10; missed: ${misses.join(' | ')}`);

    // An edit drops the old vector and the queue embeds the new text.
    const before = fake.requests.length;
    await k.request(`/api/memory/items/${ids[0]}`, { method: 'PUT', json: { content: 'The user moved to Braga last year.' } });
    await waitFor(
      async () => (await json<{ pending_embeddings: number }>(await k.request('/api/memory/stats'))).pending_embeddings === 0 && fake.requests.length > before,
      5000,
      'the edited text embedded',
    );
    const moved = await json<{ results: Array<{ id: string }> }>(
      await k.request(`/api/memory/agents/${AGENT_A}/search?q=${encodeURIComponent('where did the user move')}&limit=1`),
    );
    assert.equal(moved.results[0].id, ids[0]);
  } finally {
    await k.stop();
  }
});

test('an unreachable embedding provider: search falls back to FTS5 and entries stay pending', async () => {
  const k = await startMemoryKernel('[memory]\nembedding_provider = "http://127.0.0.1:9/v1"\n');
  try {
    const ids = await load(k);
    const res = await json<{ mode: string; results: Array<{ id: string }> }>(await k.request(`/api/memory/agents/${AGENT_A}/search?q=allergic&limit=3`));
    assert.equal(res.mode, 'fts5');
    assert.equal(res.results[0].id, ids[2]);
    const stats = await json<{ pending_embeddings: number; embedding_status: string }>(await k.request('/api/memory/stats'));
    assert.equal(stats.embedding_status, 'fts5+vector');
    assert.ok(stats.pending_embeddings > 0);
  } finally {
    await k.stop();
  }
});

/**
 * Search with a session leaves out other sessions' session-level entries. The filter exists twice
 * (services/search.ts): in `matches` (candidates checked in JS) and in the SQL of the exact
 * filtered BM25 query, which runs when other entries crowd the unfiltered top list. Each case
 * below fails when one of them is removed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryOnDisk, AGENT_A } from './helpers.ts';

const ONE = 'aaaaaaaa-0000-4000-8000-000000000001';
const TWO = 'aaaaaaaa-0000-4000-8000-000000000002';

let env: Awaited<ReturnType<typeof memoryOnDisk>>;

before(async () => {
  env = await memoryOnDisk();
  const add = (content: string, level: 'user' | 'session', sessionId?: string) => env.memory.entries.add({ content, agentId: AGENT_A, level, sessionId });
  await add('Tomato harvest in session one: the user picks them on Sunday.', 'session', ONE);
  await add('Tomato harvest without a session: kept for every conversation.', 'session');
  await add('The user grows tomatoes and plans the harvest every August.', 'user');
  await add('Tomato harvest in session two: the user sells them at the market.', 'session', TWO);
});
after(() => env.close());

const search = (sessionId: string, query = 'tomato harvest') => env.memory.searchHits(query, { agentId: AGENT_A, sessionId, limit: 10 });

test("a search with a session finds that session's entries, session-less ones and other levels, never another session's", async () => {
  const { hits } = await search(ONE);
  const found = hits.map((h) => h.content).sort();
  assert.deepEqual(found, [
    'The user grows tomatoes and plans the harvest every August.',
    'Tomato harvest in session one: the user picks them on Sunday.',
    'Tomato harvest without a session: kept for every conversation.',
  ]);
  assert.ok(!found.some((c) => c.includes('session two')));
  // Without a session, every session's entries are candidates.
  const all = await env.memory.searchHits('tomato harvest', { agentId: AGENT_A, limit: 10 });
  assert.equal(all.hits.length, 4);
});

test('the filter holds when many entries of another session crowd the text search (exact SQL query)', async () => {
  // 120 short, strongly matching entries of session two push session one's entry out of the unfiltered top list.
  for (let i = 0; i < 120; i++) await env.memory.entries.add({ content: `crowded ${i}: tomato harvest`, agentId: AGENT_A, level: 'session', sessionId: TWO });
  const { hits } = await search(ONE, 'tomato harvest crowded');
  const found = hits.map((h) => h.content);
  assert.ok(found.includes('Tomato harvest in session one: the user picks them on Sunday.'), `session one's entry is found: ${JSON.stringify(found)}`);
  assert.ok(!found.some((c) => c.startsWith('crowded') || c.includes('session two')), `no entry of session two: ${JSON.stringify(found)}`);
});

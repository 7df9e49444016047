import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestKernel } from '@talon/testing';
import { startMemoryKernel, json, AGENT_A, AGENT_B } from './helpers.ts';

interface Item {
  id: string;
  content: string;
  level: string;
  agent_id: string | null;
  user_id: string | null;
  tags: string[];
  score: number;
  created_at: string;
  category: string | null;
}
type Err = { error: string };

let k: TestKernel;
before(async () => {
  k = await startMemoryKernel('[memory]\nmax_content_bytes = 200\n');
});
after(() => k.stop());

const post = (path: string, body: unknown) => k.request(path, { method: 'POST', json: body });
const create = async (body: Record<string, unknown>): Promise<Item> => {
  const res = await post('/api/memory', body);
  assert.equal(res.status, 201, JSON.stringify(await res.clone().json()));
  return json<Item>(res);
};

test('POST /api/memory creates an entry (201) with defaults', async () => {
  const item = await create({ content: 'The user lives in Lisbon', agent_id: AGENT_A, user_id: 'u1', tags: ['home', 'home', 'city'] });
  assert.match(item.id, /^[0-9a-f-]{36}$/);
  assert.equal(item.content, 'The user lives in Lisbon');
  assert.equal(item.level, 'session');
  assert.equal(item.agent_id, AGENT_A);
  assert.equal(item.user_id, 'u1');
  assert.deepEqual(item.tags, ['home', 'city']);
  assert.equal(item.score, 1);
  assert.ok(!Number.isNaN(Date.parse(item.created_at)));
  const user = await create({ content: 'The user prefers tea over coffee', agent_id: AGENT_A, user_id: 'u1', tags: [], level: 'user', category: 'preference' });
  assert.equal(user.level, 'user');
  assert.equal(user.category, 'preference');
});

test('a NUL in the content is kept on SQLite and stored as U+FFFD on PostgreSQL (whose text cannot hold it), never a 500', async () => {
  const item = await create({ content: 'before\u0000after', tags: ['t\u0000'] });
  const nul = k.kernel.store.dialect === 'sqlite' ? '\u0000' : '\uFFFD';
  assert.equal(item.content, `before${nul}after`);
  const listed = await json<{ memories: Item[] }>(await k.request('/api/memory?limit=100'));
  const stored = listed.memories.find((i) => i.id === item.id);
  assert.equal(stored?.content, `before${nul}after`);
  assert.deepEqual(stored.tags, ['t\u0000'], 'inside JSON text the NUL is an escape, kept on both engines');
  // The tests below count the entries.
  assert.equal((await k.request(`/api/memory/items/${item.id}`, { method: 'DELETE' })).status, 200);
});

test('POST /api/memory refuses bad bodies', async () => {
  for (const [body, status, pattern] of [
    [{}, 400, /content/],
    [{ content: '' }, 400, /content/],
    [{ content: '   ' }, 400, /content/],
    [{ content: 'x', agent_id: 'nope' }, 400, /nope/],
    [{ content: 'x', level: 'global' }, 400, /level/],
    [{ content: 'x', tags: 'a' }, 400, /tags/],
    [{ content: 'x', extra: 1 }, 400, /extra|additional/],
    [{ content: 'x'.repeat(201) }, 413, /201 bytes/],
  ] as const) {
    const res = await post('/api/memory', body);
    assert.equal(res.status, status, JSON.stringify(body));
    assert.match((await json<Err>(res)).error, pattern);
  }
});

test('GET /api/memory lists, paginates and filters', async () => {
  await create({ content: 'Agent B note one', agent_id: AGENT_B, tags: ['b'] });
  await create({ content: 'Agent B note two', agent_id: AGENT_B, tags: ['b'], level: 'agent' });
  const all = await json<{ memories: Item[]; total: number; offset: number; limit: number; proactive_enabled: boolean }>(await k.request('/api/memory'));
  assert.ok(all.total >= 4);
  assert.equal(all.limit, 10);
  assert.equal(all.offset, 0);
  assert.equal(all.proactive_enabled, true);
  const page = await json<{ memories: Item[]; total: number }>(await k.request('/api/memory?limit=1&offset=1'));
  assert.equal(page.memories.length, 1);
  assert.equal(page.memories[0].id, all.memories[1].id);
  const b = await json<{ memories: Item[]; total: number }>(await k.request(`/api/memory?agent_id=${AGENT_B}&level=agent`));
  assert.deepEqual(
    b.memories.map((m) => m.content),
    ['Agent B note two'],
  );
  const tagged = await json<{ total: number }>(await k.request('/api/memory?tag=b'));
  assert.equal(tagged.total, 2);
  assert.equal((await k.request('/api/memory?level=bogus')).status, 400);
  assert.equal((await k.request('/api/memory?limit=-1')).status, 400);
  assert.equal((await k.request('/api/memory?agent_id=xyz')).status, 400);
});

test('search: q required, relevance on each hit, agent scoping', async () => {
  const missing = await k.request('/api/memory/search');
  assert.equal(missing.status, 400);
  assert.match((await json<Err>(missing)).error, /'q'/);
  assert.equal((await k.request('/api/memory/search?q=%20')).status, 400);
  const res = await json<{ results: Array<Item & { relevance: number }>; mode: string; total: number }>(
    await k.request('/api/memory/search?q=where%20does%20the%20user%20live'),
  );
  assert.equal(res.mode, 'fts5');
  assert.equal(res.results[0].content, 'The user lives in Lisbon');
  assert.ok(res.results[0].relevance > 0 && res.results[0].relevance <= 1);
  const scoped = await json<{ results: Item[] }>(await k.request(`/api/memory/search?q=note&agent_id=${AGENT_A}`));
  assert.equal(scoped.results.length, 0);
  const agent = await json<{ results: Item[]; agent_id: string }>(await k.request(`/api/memory/agents/${AGENT_B}/search?q=note&limit=1`));
  assert.equal(agent.results.length, 1);
  assert.equal(agent.results[0].agent_id, AGENT_B);
  assert.equal((await k.request(`/api/memory/agents/${AGENT_B}/search`)).status, 400);
  assert.equal((await k.request('/api/memory/agents/bad/search?q=x')).status, 400);
  assert.equal((await k.request('/api/memory/search?q=x&limit=0')).status, 400);
});

test('stats and count by level; embedding status without a provider', async () => {
  const stats = await json<{ total: number; by_level: Record<string, number>; embedding_status: string; kv_pairs: number }>(
    await k.request('/api/memory/stats'),
  );
  assert.equal(stats.embedding_status, 'fts5 only — no embedding provider configured');
  assert.equal(stats.total, stats.by_level.user + stats.by_level.session + stats.by_level.agent);
  const a = await json<{ agent_id: string; total: number; by_level: Record<string, number> }>(await k.request(`/api/memory/agents/${AGENT_A}/stats`));
  assert.deepEqual(a.by_level, { user: 1, session: 1, agent: 0 });
  const count = await json(await k.request(`/api/memory/agents/${AGENT_A}/count`));
  assert.deepEqual(count, { agent_id: AGENT_A, count: 2, by_level: { user: 1, session: 1, agent: 0 } });
  assert.equal((await k.request('/api/memory/agents/x/stats')).status, 400);
  assert.equal((await k.request('/api/memory/agents/x/count')).status, 400);
});

test('PUT /items keeps the previous content in the history; DELETE removes', async () => {
  const item = await create({ content: 'The project deadline is in May', agent_id: AGENT_A, level: 'agent' });
  const put = await k.request(`/api/memory/items/${item.id}`, { method: 'PUT', json: { content: 'The project deadline is in June', tags: ['deadline'] } });
  assert.equal(put.status, 200);
  const updated = await json<Item>(put);
  assert.equal(updated.content, 'The project deadline is in June');
  assert.deepEqual(updated.tags, ['deadline']);
  const hist = await json<{ id: string; current: Item; history: Array<{ content: string; reason: string; tags: string[] }> }>(
    await k.request(`/api/memory/items/${item.id}/history`),
  );
  assert.equal(hist.current.content, 'The project deadline is in June');
  assert.deepEqual(
    hist.history.map((h) => [h.content, h.reason]),
    [['The project deadline is in May', 'update']],
  );
  // Search sees the new text only.
  const june = await json<{ results: Item[] }>(await k.request('/api/memory/search?q=deadline%20june'));
  assert.equal(june.results[0].id, item.id);
  const may = await json<{ results: Item[] }>(await k.request('/api/memory/search?q=may'));
  assert.ok(!may.results.some((r) => r.id === item.id));

  assert.equal((await k.request(`/api/memory/items/${item.id}`, { method: 'PUT', json: {} })).status, 400);
  assert.equal((await k.request(`/api/memory/items/${item.id}`, { method: 'PUT', json: { content: '' } })).status, 400);
  assert.equal((await k.request(`/api/memory/items/${item.id}`, { method: 'PUT', json: { level: 'x' } })).status, 400);
  const unknown = '33333333-3333-4333-8333-333333333333';
  const missing = await k.request(`/api/memory/items/${unknown}`, { method: 'PUT', json: { content: 'x' } });
  assert.equal(missing.status, 404);
  assert.match((await json<Err>(missing)).error, new RegExp(unknown));
  assert.equal((await k.request('/api/memory/items/not-uuid', { method: 'PUT', json: { content: 'x' } })).status, 400);
  assert.equal((await k.request(`/api/memory/items/${unknown}/history`)).status, 404);

  const del = await k.request(`/api/memory/items/${item.id}`, { method: 'DELETE' });
  assert.deepEqual(await json(del), { status: 'deleted', id: item.id });
  assert.equal((await k.request(`/api/memory/items/${item.id}`, { method: 'DELETE' })).status, 404);
  assert.equal((await k.request(`/api/memory/items/${item.id}/history`)).status, 404);
});

test('bulk-delete reports deleted and failed ids', async () => {
  const a = await create({ content: 'bulk one' });
  const b = await create({ content: 'bulk two' });
  const gone = '44444444-4444-4444-8444-444444444444';
  const res = await json(await post('/api/memory/bulk-delete', { ids: [a.id, b.id, gone] }));
  assert.deepEqual(res, { deleted: 2, failed: [gone], total: 3 });
  assert.equal((await post('/api/memory/bulk-delete', {})).status, 400);
  assert.equal((await post('/api/memory/bulk-delete', { ids: [] })).status, 400);
  assert.equal((await post('/api/memory/bulk-delete', { ids: 'x' })).status, 400);
});

test('GET /api/memory/user/{user_id}', async () => {
  const res = await json<{ user_id: string; memories: Item[]; total: number }>(await k.request('/api/memory/user/u1'));
  assert.equal(res.total, 2);
  assert.ok(res.memories.every((m) => m.user_id === 'u1'));
  assert.equal((await json<{ total: number }>(await k.request('/api/memory/user/nobody'))).total, 0);
});

test('cleanup removes expired entries; decay is idempotent within a period', async () => {
  const expired = await create({ content: 'short lived', expires_at: new Date(Date.now() - 1000).toISOString() });
  const res = await json<{ removed: number; expired: number; stale: number }>(await post('/api/memory/cleanup', {}));
  assert.ok(res.expired >= 1);
  assert.equal(res.removed, res.expired + res.stale);
  assert.equal((await k.request(`/api/memory/items/${expired.id}/history`)).status, 404);
  const first = await json<{ decayed: number; decay_rate: number; applied_until: string }>(await post('/api/memory/decay', {}));
  assert.equal(first.decay_rate, 0.01);
  const second = await json<{ decayed: number; applied_until: string }>(await post('/api/memory/decay', {}));
  assert.equal(second.decayed, 0);
  assert.equal(second.applied_until, first.applied_until);
});

test('agent list, level delete and agent delete', async () => {
  const list = await json<{ agent_id: string; memories: Item[]; total: number }>(await k.request(`/api/memory/agents/${AGENT_B}`));
  assert.equal(list.total, 2);
  const bad = await k.request(`/api/memory/agents/${AGENT_B}/level/important`, { method: 'DELETE' });
  assert.equal(bad.status, 400);
  assert.match((await json<Err>(bad)).error, /important/);
  assert.deepEqual(await json(await k.request(`/api/memory/agents/${AGENT_B}/level/agent`, { method: 'DELETE' })), {
    status: 'deleted',
    agent_id: AGENT_B,
    level: 'agent',
    deleted: 1,
  });
  assert.deepEqual(await json(await k.request(`/api/memory/agents/${AGENT_B}`, { method: 'DELETE' })), { status: 'deleted', agent_id: AGENT_B, deleted: 1 });
  assert.equal((await json<{ total: number }>(await k.request(`/api/memory/agents/${AGENT_B}`))).total, 0);
  assert.equal((await k.request('/api/memory/agents/zzz')).status, 400);
  assert.equal((await k.request('/api/memory/agents/zzz', { method: 'DELETE' })).status, 400);
  assert.equal((await k.request('/api/memory/agents/zzz/level/user', { method: 'DELETE' })).status, 400);
});

test('duplicates and consolidate merge near-duplicates, keeping history', async () => {
  const agent = '55555555-5555-4555-8555-555555555555';
  const p = `/api/memory/agents/${agent}`;
  const a = await create({ content: 'The user prefers dark mode in the code editor', agent_id: agent, level: 'user', tags: ['ui'] });
  const b = await create({ content: 'The user prefers the dark mode in code editors', agent_id: agent, level: 'user', tags: ['editor'] });
  const c = await create({ content: 'The user has a cat named Miso', agent_id: agent, level: 'user' });
  const dups = await json<{ groups: Array<{ keep: { id: string }; duplicates: Array<{ id: string; similarity: number }> }>; total: number }>(
    await k.request(`${p}/duplicates`),
  );
  assert.equal(dups.total, 1);
  const ids = [dups.groups[0].keep.id, dups.groups[0].duplicates[0].id].sort();
  assert.deepEqual(ids, [a.id, b.id].sort());
  assert.ok(dups.groups[0].duplicates[0].similarity >= 0.85);
  assert.equal((await k.request(`${p}/duplicates?threshold=2`)).status, 400);

  const res = await json<{ consolidated: boolean; merged_count: number; groups: Array<{ kept: string; merged: string[] }> }>(
    await post(`${p}/consolidate`, {}),
  );
  assert.equal(res.consolidated, true);
  assert.equal(res.merged_count, 1);
  const kept = res.groups[0].kept;
  const list = await json<{ memories: Item[] }>(await k.request(p));
  assert.deepEqual(list.memories.map((m) => m.id).sort(), [kept, c.id].sort());
  const keptItem = list.memories.find((m) => m.id === kept)!;
  assert.deepEqual(keptItem.tags.sort(), ['editor', 'ui']);
  const hist = await json<{ history: Array<{ content: string; reason: string }> }>(await k.request(`/api/memory/items/${kept}/history`));
  const mergedId = res.groups[0].merged[0];
  assert.equal(hist.history.length, 1);
  assert.match(hist.history[0].reason, new RegExp(mergedId));
  assert.equal(hist.history[0].content, mergedId === a.id ? a.content : b.content);
  assert.equal((await json<{ merged_count: number }>(await post(`${p}/consolidate`, {}))).merged_count, 0);
  assert.equal((await post('/api/memory/agents/x/consolidate', {})).status, 400);
  assert.equal((await k.request('/api/memory/agents/x/duplicates')).status, 400);
});

test('relations: store, update, query filters, errors', async () => {
  const p = `/api/memory/agents/${AGENT_A}/relations`;
  const r1 = await post(p, { subject: 'Alice', relation: 'works at', object: 'Acme', confidence: 0.9 });
  assert.equal(r1.status, 201);
  const rel = await json<{ id: string; relation: string; confidence: number }>(r1);
  assert.equal(rel.relation, 'works_at');
  await post(p, { subject: 'Alice', relation: 'knows_about', object: 'Rust', confidence: 0.6 });
  await post(p, { subject: 'Bob', relation: 'works_at', object: 'Acme' });
  const again = await json<{ id: string; confidence: number }>(await post(p, { subject: 'Alice', relation: 'works_at', object: 'Acme', confidence: 0.5 }));
  assert.equal(again.id, rel.id);
  assert.equal(again.confidence, 0.5);
  const q = async (qs: string) =>
    (await json<{ relations: Array<{ subject: string; object: string }>; total: number }>(await k.request(`${p}?${qs}`))).relations
      .map((r) => `${r.subject}>${r.object}`)
      .sort();
  assert.deepEqual(await q('subject=alice'), ['Alice>Acme', 'Alice>Rust']);
  assert.deepEqual(await q('relation=works_at'), ['Alice>Acme', 'Bob>Acme']);
  assert.deepEqual(await q('object=Acme&subject=Bob'), ['Bob>Acme']);
  assert.deepEqual(await q('entity=Acme&min_confidence=0.7'), ['Bob>Acme']);
  assert.deepEqual(await q(''), ['Alice>Acme', 'Alice>Rust', 'Bob>Acme']);
  assert.equal((await json<{ total: number }>(await k.request(`/api/memory/agents/${AGENT_B}/relations`))).total, 0);
  for (const body of [
    {},
    { subject: 'a', relation: 'r' },
    { subject: 'a', relation: 'r', object: 'b', confidence: 2 },
    { subject: 'a', relation: 'bad/rel', object: 'b' },
  ]) {
    const res = await post(p, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(typeof (await json<Err>(res)).error, 'string');
  }
  assert.equal((await k.request(`${p}?min_confidence=5`)).status, 400);
  assert.equal((await k.request('/api/memory/agents/x/relations')).status, 400);
});

test('export → wipe → import round-trips exactly', async () => {
  const agent = '66666666-6666-4666-8666-666666666666';
  const base = `/api/memory/agents/${agent}`;
  const item = await create({
    content: 'The user speaks Portuguese and English',
    agent_id: agent,
    user_id: 'u9',
    level: 'user',
    tags: ['language'],
    category: 'personal_detail',
    metadata: { source_turn: 3 },
  });
  await k.request(`/api/memory/items/${item.id}`, { method: 'PUT', json: { content: 'The user speaks Portuguese, English and French' } });
  await create({ content: 'Session scratch note', agent_id: agent, session_id: 's-1' });
  await post(`${base}/relations`, { subject: 'User', relation: 'speaks', object: 'French', confidence: 0.7 });
  await k.request(`/api/memory/agents/${agent}/kv/pref.theme`, { method: 'PUT', json: { value: { dark: true, size: [1, 2] } } });
  const exported = await json<Record<string, unknown> & { memories: unknown[]; relations: unknown[]; kv_pairs: unknown[] }>(await k.request(`${base}/export`));
  assert.equal(exported.format, 'talon-memory/1');
  assert.equal(exported.memories.length, 2);
  assert.equal(exported.relations.length, 1);
  assert.equal(exported.kv_pairs.length, 1);

  await k.request(base, { method: 'DELETE' });
  await k.request(`/api/memory/agents/${agent}/kv/pref.theme`, { method: 'DELETE' });
  // relations go with a fresh import; delete them through a re-import check below
  const imp = await post(`${base}/import`, exported);
  assert.equal(imp.status, 200);
  assert.deepEqual((await json<{ imported: unknown }>(imp)).imported, { memories: 2, relations: 1, kv_pairs: 1 });
  const again = await json<Record<string, unknown>>(await k.request(`${base}/export`));
  const strip = (d: Record<string, unknown>) => ({ ...d, exported_at: undefined });
  assert.deepEqual(strip(again), strip(exported));
  // Importing the same document twice changes nothing either.
  await post(`${base}/import`, exported);
  assert.deepEqual(strip(await json<Record<string, unknown>>(await k.request(`${base}/export`))), strip(exported));

  assert.equal((await post(`${base}/import`, { memories: [{ level: 'user' }] })).status, 400);
  assert.equal((await post(`${base}/import`, { memories: [{ content: 'x', level: 'nope' }] })).status, 400);
  assert.equal((await post(`${base}/import`, { kv_pairs: [{ key: 'bad key', value: 1 }] })).status, 400);
  assert.equal((await post(`${base}/import`, { surprise: 1 })).status, 400);
  assert.equal((await post('/api/memory/agents/x/import', {})).status, 400);
  assert.equal((await k.request('/api/memory/agents/x/export')).status, 400);
});

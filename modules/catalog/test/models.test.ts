import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { json, service } from './helpers.ts';

const home = mkdtempSync(path.join(tmpdir(), 'catalog-models-'));
let k: TestKernel;

before(async () => {
  k = await startTestKernel({ only: ['catalog', 'error-envelope'], home });
});
after(async () => {
  await k?.stop();
  rmSync(home, { recursive: true, force: true });
});

test('GET /api/models lists the whole catalogue with the spec fields', async () => {
  const res = await k.request('/api/models');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = (await res.json()) as { models: Array<Record<string, unknown>>; total: number };
  assert.ok(body.total >= 130);
  assert.equal(body.models.length, body.total);
  const m = body.models.find((x) => x.id === 'gpt-4o')!;
  for (const field of [
    'id',
    'provider',
    'display_name',
    'tier',
    'context_window',
    'input_cost_per_1m',
    'output_cost_per_1m',
    'supports_tools',
    'supports_vision',
    'supports_streaming',
  ])
    assert.ok(field in m, field);
  assert.equal(m.provider, 'openai');
  assert.equal(typeof m.context_window, 'number');
});

test('GET /api/models filters by provider and tier; unknown tier is 400, unknown provider is empty', async () => {
  const a = (await json(await k.request('/api/models?provider=anthropic'))) as { models: Array<{ provider: string }>; total: number };
  assert.ok(a.total > 0);
  assert.ok(a.models.every((m) => m.provider === 'anthropic'));
  const f = (await json(await k.request('/api/models?tier=frontier&provider=openai'))) as { models: Array<{ tier: string; provider: string }>; total: number };
  assert.ok(f.total > 0);
  assert.ok(f.models.every((m) => m.tier === 'frontier' && m.provider === 'openai'));
  const bad = await k.request('/api/models?tier=legendary');
  assert.equal(bad.status, 400);
  assert.match(String((await json(bad)).error), /tier/);
  assert.deepEqual(await json(await k.request('/api/models?provider=nobody')), { models: [], total: 0 });
  assert.equal((await json(await k.request('/api/models?provider=google'))).total, (await json(await k.request('/api/models?provider=gemini'))).total);
});

test('GET /api/models/{id}: plain ids, aliases, ids with slashes, 404 naming the model', async () => {
  const plain = await json(await k.request('/api/models/gpt-4o'));
  assert.equal(plain.id, 'gpt-4o');
  const alias = await json(await k.request('/api/models/sonnet'));
  assert.equal(alias.provider, 'anthropic');
  const slashed = service(k)
    .models({ provider: 'openrouter' })
    .find((m) => m.id.includes('/'))!;
  const viaPath = await k.request(`/api/models/${slashed.id}`);
  assert.equal(viaPath.status, 200);
  assert.equal((await json(viaPath)).id, slashed.id);
  const encoded = await k.request(`/api/models/${encodeURIComponent(slashed.id)}`);
  assert.equal((await json(encoded)).id, slashed.id);
  for (const missing of ['no-such-model', 'vendor/no-such/model']) {
    const res = await k.request(`/api/models/${missing}`);
    assert.equal(res.status, 404);
    assert.deepEqual(await json(res), { error: `model '${missing}' not found` });
  }
});

test('aliases: list, create, change, reject bad targets and model ids, delete, 404 when absent', async () => {
  const list = (await json(await k.request('/api/models/aliases'))) as { aliases: Record<string, string>; total: number };
  assert.equal(list.aliases.sonnet, service(k).resolveAlias('sonnet'));
  assert.equal(list.total, Object.keys(list.aliases).length);

  const created = await k.request('/api/models/aliases', { method: 'POST', json: { alias: 'my-fast', model_id: 'gpt-4o-mini' } });
  assert.equal(created.status, 201);
  assert.deepEqual(await json(created), { status: 'created', alias: 'my-fast', model_id: 'gpt-4o-mini' });
  assert.equal(service(k).resolveAlias('my-fast'), 'gpt-4o-mini');
  assert.equal((await json(await k.request('/api/models/my-fast'))).id, 'gpt-4o-mini');

  // pointing at an alias stores the canonical id; re-pointing is 200
  const changed = await k.request('/api/models/aliases', { method: 'POST', json: { alias: 'my-fast', model_id: 'haiku' } });
  assert.equal(changed.status, 200);
  assert.equal((await json(changed)).model_id, service(k).resolveAlias('haiku'));

  const unknown = await k.request('/api/models/aliases', { method: 'POST', json: { alias: 'x1', model_id: 'does-not-exist' } });
  assert.equal(unknown.status, 400);
  assert.deepEqual(await json(unknown), { error: "model 'does-not-exist' not found" });
  const taken = await k.request('/api/models/aliases', { method: 'POST', json: { alias: 'gpt-4o', model_id: 'gpt-4o-mini' } });
  assert.equal(taken.status, 400);
  for (const body of [
    {},
    { alias: 'a' },
    { alias: 5, model_id: 'gpt-4o' },
    { alias: 'a b', model_id: 'gpt-4o' },
    { alias: 'a', model_id: 'gpt-4o', extra: 1 },
  ]) {
    const res = await k.request('/api/models/aliases', { method: 'POST', json: body });
    assert.equal(res.status, 400, JSON.stringify(body));
  }

  const del = await k.request('/api/models/aliases/my-fast', { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.equal(service(k).resolveAlias('my-fast'), 'my-fast');
  assert.equal((await k.request('/api/models/aliases/my-fast', { method: 'DELETE' })).status, 404);

  // aliases may contain slashes
  assert.equal((await k.request('/api/models/aliases', { method: 'POST', json: { alias: 'team/fast', model_id: 'gpt-4o-mini' } })).status, 201);
  assert.equal((await json(await k.request('/api/models/team/fast'))).id, 'gpt-4o-mini');
  assert.equal((await k.request('/api/models/aliases/team/fast', { method: 'DELETE' })).status, 200);
  assert.equal((await k.request('/api/models/team/fast')).status, 404);

  // a catalogue alias can be deleted too, and stays deleted
  assert.equal((await k.request('/api/models/aliases/opus', { method: 'DELETE' })).status, 200);
  assert.equal((await k.request('/api/models/opus')).status, 404);
});

test('a custom model brings its aliases', async () => {
  const res = await k.request('/api/models/custom', {
    method: 'POST',
    json: { id: 'acme/alias-me', provider: 'openai', display_name: 'A', context_window: 1000, aliases: ['acme-short'] },
  });
  assert.equal(res.status, 201);
  assert.equal(service(k).resolveAlias('acme-short'), 'acme/alias-me');
  const listed = (await (await k.request('/api/models/aliases')).json()) as { aliases: Record<string, string> };
  assert.equal(listed.aliases['acme-short'], 'acme/alias-me');
  assert.equal((await k.request('/api/models/custom/acme/alias-me', { method: 'DELETE' })).status, 200);
});

test('custom models: add (ids with slashes), read, duplicate and bad bodies rejected, delete only custom ones', async () => {
  const body = {
    id: 'acme/tiny-1',
    provider: 'openai',
    display_name: 'Tiny',
    context_window: 8192,
    input_cost_per_1m: 1,
    output_cost_per_1m: 2,
    supports_tools: true,
  };
  const res = await k.request('/api/models/custom', { method: 'POST', json: body });
  assert.equal(res.status, 201);
  const created = await json(res);
  assert.equal(created.id, 'acme/tiny-1');
  assert.equal(created.custom, true);
  assert.equal(created.tier, 'custom');
  assert.equal((await json(await k.request('/api/models/acme/tiny-1'))).display_name, 'Tiny');
  assert.ok(Math.abs(service(k).cost('openai', 'acme/tiny-1', 1e6, 1e6) - 3) < 1e-12);
  assert.ok(
    service(k)
      .models({ provider: 'openai' })
      .some((m) => m.id === 'acme/tiny-1'),
  );

  const dup = await k.request('/api/models/custom', { method: 'POST', json: body });
  assert.equal(dup.status, 400);
  assert.match(JSON.stringify(await json(dup)), /acme\/tiny-1/);
  const builtinDup = await k.request('/api/models/custom', { method: 'POST', json: { ...body, id: 'gpt-4o' } });
  assert.equal(builtinDup.status, 400);
  const bad = [
    {},
    { id: 'x', provider: 'openai', display_name: 'X' },
    { id: 'x', provider: 'openai', display_name: 'X', context_window: '8192' },
    { id: 'x', provider: 'openai', display_name: 'X', context_window: 1.5 },
    { id: 'x', provider: 'openai', display_name: 'X', context_window: 100, supports_tools: 'yes' },
    { id: 'x', provider: 'openai', display_name: 'X', context_window: 100, tier: 'mythic' },
    { id: 'x', provider: 'nobody', display_name: 'X', context_window: 100 },
  ];
  for (const b of bad) assert.equal((await k.request('/api/models/custom', { method: 'POST', json: b })).status, 400, JSON.stringify(b));
  const malformed = await k.request('/api/models/custom', { method: 'POST', body: '{"id":', headers: { 'content-type': 'application/json' } });
  assert.equal(malformed.status, 400);

  const builtin = await k.request('/api/models/custom/gpt-4o', { method: 'DELETE' });
  assert.equal(builtin.status, 400);
  assert.match(String((await json(builtin)).error), /only custom models/);
  assert.equal((await k.request('/api/models/custom/nope/nope', { method: 'DELETE' })).status, 404);
  const del = await k.request('/api/models/custom/acme/tiny-1', { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.deepEqual(await json(del), { status: 'removed', id: 'acme/tiny-1' });
  assert.equal((await k.request('/api/models/acme/tiny-1')).status, 404);
});

test('custom models and aliases persist across a restart', async () => {
  await k.request('/api/models/custom', { method: 'POST', json: { id: 'keep-me', provider: 'groq', display_name: 'Keep', context_window: 4096 } });
  await k.request('/api/models/aliases', { method: 'POST', json: { alias: 'kept', model_id: 'keep-me' } });
  await k.stop();
  k = await startTestKernel({ only: ['catalog', 'error-envelope'], home });
  assert.equal((await json(await k.request('/api/models/kept'))).id, 'keep-me');
  assert.equal((await k.request('/api/models/opus')).status, 404, 'a deleted catalogue alias stays deleted');
});

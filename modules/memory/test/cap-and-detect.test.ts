/** The per-agent cap with eviction of the least important entries, and embedding_provider = "auto". */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeProvider, waitFor } from '@talon/testing';
import { detectEmbeddingProvider } from '../services/embedder.ts';
import { AGENT_A, AGENT_B, json, memoryOnDisk, startMemoryKernel } from './helpers.ts';

test('max_entries_per_agent: past the cap the lowest score goes first, then the least recently recalled; other agents are untouched', async () => {
  let clock = Date.UTC(2026, 0, 1);
  const { memory, store, close } = await memoryOnDisk({ now: () => clock, config: { max_entries_per_agent: 3 } });
  try {
    const add = async (content: string, agentId = AGENT_A) => {
      clock += 1000;
      return (await memory.entries.add({ content, agentId, level: 'user' })).id;
    };
    const [faded, old, recalled] = [await add('faded fact'), await add('old fact'), await add('recalled fact')];
    await add('of another agent', AGENT_B);
    await store.run('UPDATE memory_entries SET score = 0.2 WHERE id = ?', [faded]);
    await memory.entries.touch([recalled]);
    const fresh = await add('a new fact');
    const ids = async () => (await memory.entries.agentRows(AGENT_A)).map((r) => r.id);
    assert.deepEqual(await ids(), [old, recalled, fresh], 'the lowest score was evicted');
    await add('one more');
    assert.deepEqual((await ids()).includes(old), false, 'then the least recently recalled of equal score');
    assert.equal((await ids()).length, 3);
    assert.equal((await memory.entries.agentRows(AGENT_B)).length, 1);
    // An import counts against the cap too.
    await memory.transfer.import(AGENT_A, { memories: [{ content: 'imported one' }, { content: 'imported two' }] });
    assert.equal((await ids()).length, 3);
  } finally {
    await close();
  }
});

test('max_entries_per_agent holds when many entries of one agent are stored at once', async () => {
  const { memory, close } = await memoryOnDisk({ config: { max_entries_per_agent: 5 } });
  try {
    await Promise.all(Array.from({ length: 20 }, (_, i) => memory.entries.add({ content: `fact ${i}`, agentId: AGENT_A, level: 'user' })));
    assert.equal((await memory.entries.agentRows(AGENT_A)).length, 5);
  } finally {
    await close();
  }
});

test('detectEmbeddingProvider: cloud keys in the reference order, then local servers as OpenAI-compatible base URLs', () => {
  assert.equal(detectEmbeddingProvider({}), undefined);
  assert.deepEqual(detectEmbeddingProvider({ MISTRAL_API_KEY: 'm', OPENROUTER_API_KEY: 'o', OLLAMA_HOST: 'x:1' }), {
    provider: 'openrouter',
    from: 'OPENROUTER_API_KEY',
  });
  assert.deepEqual(
    detectEmbeddingProvider({ OPENAI_API_KEY: ' ', FIREWORKS_API_KEY: 'f' }),
    { provider: 'fireworks', from: 'FIREWORKS_API_KEY' },
    'blank is unset',
  );
  assert.deepEqual(detectEmbeddingProvider({ OLLAMA_HOST: '127.0.0.1:11434', VLLM_BASE_URL: 'http://v:8000/v1' }), {
    provider: 'http://127.0.0.1:11434/v1',
    from: 'OLLAMA_HOST',
  });
  assert.deepEqual(detectEmbeddingProvider({ LMSTUDIO_BASE_URL: 'http://127.0.0.1:1234/' }), {
    provider: 'http://127.0.0.1:1234/v1',
    from: 'LMSTUDIO_BASE_URL',
  });
});

test('embedding_provider = "auto" embeds through the provider the environment names', async () => {
  const fake = new FakeProvider();
  await fake.start();
  const names = [
    'OPENAI_API_KEY',
    'OPENROUTER_API_KEY',
    'MISTRAL_API_KEY',
    'TOGETHER_API_KEY',
    'FIREWORKS_API_KEY',
    'OLLAMA_HOST',
    'VLLM_BASE_URL',
    'LMSTUDIO_BASE_URL',
  ];
  const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
  names.forEach((n) => delete process.env[n]);
  process.env.OLLAMA_HOST = fake.url.replace('http://', '');
  const k = await startMemoryKernel('[memory]\nembedding_provider = "auto"\nembedding_model = "fake-embed"\n');
  try {
    await k.request('/api/memory', { method: 'POST', json: { content: 'The user likes tea', agent_id: AGENT_A } });
    let stats: { embedding_status: string; pending_embeddings: number } | undefined;
    stats = await waitFor(
      async () => {
        const now = await json<NonNullable<typeof stats>>(await k.request('/api/memory/stats'));
        return now.pending_embeddings === 0 ? now : undefined;
      },
      5000,
      'no embedding pending',
    );
    assert.equal(stats!.embedding_status, 'fts5+vector');
    assert.equal(stats!.pending_embeddings, 0);
    assert.ok(fake.requests.some((r) => r.path === '/v1/embeddings' && r.body.model === 'fake-embed'));
  } finally {
    await k.stop();
    await fake.stop();
    for (const n of names)
      if (saved[n] === undefined) delete process.env[n];
      else process.env[n] = saved[n];
  }
});

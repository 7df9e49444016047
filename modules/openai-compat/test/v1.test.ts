import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startHarness, type Harness } from './harness.ts';

const ONLY = ['openai-compat', 'usage', 'agents', 'catalog', 'llm', 'llm-openai', 'error-envelope'];
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

type SentMessage = { role: string; content: unknown };
const lastUserContent = (h: Harness): unknown => {
  const messages = h.fake.requests.at(-1)!.body.messages as SentMessage[];
  return messages.filter((m) => m.role === 'user').at(-1)!.content;
};

describe('chat-completions-compatible API (official openai client)', () => {
  let h: Harness;
  let client: OpenAI;
  let alpha: string;
  let beta: string;

  before(async () => {
    h = await startHarness(ONLY);
    alpha = await h.spawn('alpha');
    beta = await h.spawn('beta');
    client = new OpenAI({ baseURL: `${h.kernel.url}/v1`, apiKey: 'x', maxRetries: 0 });
  });
  after(() => h.stop());

  it('lists agents as svc:<name> models', async () => {
    const page = await client.models.list();
    const ids = page.data.map((m) => m.id).sort();
    assert.deepEqual(ids, ['svc:alpha', 'svc:beta']);
    for (const m of page.data) {
      assert.equal(m.object, 'model');
      assert.equal(typeof m.created, 'number');
      assert.ok(m.created > 1_600_000_000);
      assert.equal(typeof m.owned_by, 'string');
    }
    const raw = await h.json<{ object: string }>('/v1/models');
    assert.equal(raw.body.object, 'list');
  });

  it('answers a blocking completion in the OpenAI shape', async () => {
    h.fake.enqueue({ text: 'Hello from alpha', usage: { input: 21, output: 4 } });
    const res = await client.chat.completions.create({ model: 'svc:alpha', messages: [{ role: 'user', content: 'Hi there' }] });
    assert.match(res.id, /^chatcmpl-/);
    assert.equal(res.object, 'chat.completion');
    assert.equal(typeof res.created, 'number');
    assert.equal(res.model, 'alpha');
    assert.equal(res.choices.length, 1);
    assert.equal(res.choices[0].index, 0);
    assert.deepEqual(res.choices[0].message.role, 'assistant');
    assert.equal(res.choices[0].message.content, 'Hello from alpha');
    assert.equal(res.choices[0].finish_reason, 'stop');
    assert.deepEqual(res.usage, { prompt_tokens: 21, completion_tokens: 4, total_tokens: 25 });
    assert.equal(lastUserContent(h), 'Hi there');
  });

  it('resolves models: UUID, plain name, unknown string falls back to the first agent', async () => {
    const byId = await client.chat.completions.create({ model: beta, messages: [{ role: 'user', content: 'a' }] });
    assert.equal(byId.model, 'beta');
    const byName = await client.chat.completions.create({ model: 'beta', messages: [{ role: 'user', content: 'b' }] });
    assert.equal(byName.model, 'beta');
    const fallback = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'c' }] });
    assert.equal(fallback.model, 'alpha');
    const unknownSvc = await client.chat.completions.create({ model: 'svc:nobody', messages: [{ role: 'user', content: 'd' }] });
    assert.equal(unknownSvc.model, 'alpha');
  });

  it('passes temperature and max_tokens through and uses the last user message', async () => {
    await client.chat.completions.create({
      model: 'svc:beta',
      temperature: 0.3,
      max_tokens: 42,
      messages: [
        { role: 'system', content: 'ignored here' },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'second' },
            { type: 'text', text: 'question' },
          ],
        },
      ],
    });
    const sent = h.fake.requests.at(-1)!.body;
    assert.equal(sent.temperature, 0.3);
    assert.equal(sent.max_tokens, 42);
    assert.equal(lastUserContent(h), 'second\nquestion');
  });

  it('turns data-URL image parts into inline images', async () => {
    await client.chat.completions.create({
      model: 'svc:alpha',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } },
          ],
        },
      ],
    });
    const content = JSON.stringify(lastUserContent(h));
    assert.ok(content.includes(`data:image/png;base64,${PIXEL}`), content);
    assert.ok(content.includes('what is this?'));
  });

  it('streams chat.completion.chunk deltas, a stop chunk, usage, then [DONE]', async () => {
    h.fake.enqueue({ text: 'The quick brown fox', chunkSize: 5, usage: { input: 9, output: 6 } });
    const stream = await client.chat.completions.create({ model: 'svc:alpha', stream: true, messages: [{ role: 'user', content: 'Go' }] });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'alpha' && c.id === chunks[0].id));
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    assert.equal(text, 'The quick brown fox');
    assert.ok(chunks.filter((c) => c.choices[0]?.delta.content).length >= 2, 'content arrives in several deltas');
    const stop = chunks.findIndex((c) => c.choices[0]?.finish_reason === 'stop');
    assert.ok(stop > 0);
    assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 });
    assert.ok(chunks.slice(0, -1).every((c) => !c.usage));
  });

  it('ends the raw SSE stream with data: [DONE]', async () => {
    const res = await h.kernel.request('/v1/chat/completions', {
      method: 'POST',
      json: { model: 'svc:beta', stream: true, messages: [{ role: 'user', content: 'x' }] },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const lines = (await res.text()).split('\n').filter((l) => l.startsWith('data: '));
    assert.equal(lines.at(-1), 'data: [DONE]');
    assert.ok(lines.slice(0, -1).every((l) => JSON.parse(l.slice(6)).object === 'chat.completion.chunk'));
  });

  it('answers bad requests with OpenAI-style 400 errors', async () => {
    const cases: Array<[unknown, string]> = [
      [{ model: 'svc:alpha', messages: [] }, 'missing_message'],
      [{ model: 'svc:alpha' }, 'missing_message'],
      [{ model: 'svc:alpha', messages: [{ role: 'system', content: 'only system' }] }, 'missing_message'],
      [{ messages: [{ role: 'user', content: 'hi' }] }, 'missing_model'],
      [
        { model: 'svc:alpha', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] },
        'invalid_image_url',
      ],
      [{ model: 'svc:alpha', messages: 'hello' }, 'invalid_request'],
      [{ model: 'svc:alpha', messages: [{ role: 'user', content: 'x' }], max_tokens: 'many' }, 'invalid_request'],
    ];
    const before = h.fake.requests.length;
    for (const [body, code] of cases) {
      const res = await h.json<{ error: { message: string; type: string; code: string } }>('/v1/chat/completions', { method: 'POST', json: body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(typeof res.body.error.message, 'string');
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.code, code, JSON.stringify(body));
    }
    const malformed = await h.kernel.request('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": ' });
    assert.equal(malformed.status, 400);
    const body = (await malformed.json()) as { error: { message: string; type: string } };
    assert.equal(typeof body.error.message, 'string');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.equal(h.fake.requests.length, before, 'no bad request reached the provider');
    await assert.rejects(
      client.chat.completions.create({
        model: 'svc:alpha',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://127.0.0.1/x.png' } }] }],
      }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.status === 400,
    );
  });

  it('answers a refused turn with its status and an OpenAI error, streaming or not', async () => {
    h.fake.enqueue({ text: 'pricey', usage: { input: 1_000_000, output: 0 } });
    await client.chat.completions.create({ model: 'svc:alpha', messages: [{ role: 'user', content: 'spend' }] });
    assert.equal((await h.json('/api/budget', { method: 'PUT', json: { daily_limit_usd: 0.01 } })).status, 200);
    const before = h.fake.requests.length;
    await assert.rejects(client.chat.completions.create({ model: 'svc:alpha', messages: [{ role: 'user', content: 'more' }] }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError);
      assert.equal(err.status, 402);
      assert.match(err.message, /budget/);
      return true;
    });
    await assert.rejects(
      (async () => {
        const stream = await client.chat.completions.create({ model: 'svc:alpha', stream: true, messages: [{ role: 'user', content: 'more' }] });
        for await (const _ of stream) void _;
      })(),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 402,
    );
    assert.equal(h.fake.requests.length, before);
    await h.json('/api/budget', { method: 'PUT', json: { daily_limit_usd: 0 } });
  });

  it('answers 404 model_not_found when there are no agents at all', async () => {
    for (const id of [alpha, beta]) assert.equal((await h.json(`/api/agents/${id}?confirm=true`, { method: 'DELETE' })).status, 200);
    await assert.rejects(client.chat.completions.create({ model: 'svc:alpha', messages: [{ role: 'user', content: 'anyone?' }] }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError);
      assert.equal((err.error as { code?: string }).code, 'model_not_found');
      return true;
    });
    assert.deepEqual((await client.models.list()).data, []);
  });
});

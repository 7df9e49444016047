import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ollama } from 'ollama';
import { startLlmHarness, collect, user, weather, type LlmHarness } from '../../llm/test/support.ts';
import { LlmError, type ChatMessage, type StreamEvent } from '../../llm/api.ts';

const ref = { provider: 'ollama', model: 'llama-test' };

describe('llm-ollama driver over the native /api/chat', () => {
  let h: LlmHarness;
  before(async () => {
    // A /v1 suffix (OpenAI-compatible address) is stripped for the native API.
    h = await startLlmHarness(['llm', 'llm-ollama'], (url) => `[provider_urls]\nollama = "${url}/v1"`);
  });
  after(() => h.stop());

  it('answers a text completion with prompt_eval_count/eval_count usage, without a key', async () => {
    h.fake.enqueue({ text: 'Hello there', usage: { input: 12, output: 3 } });
    const result = await h.llm.complete(ref, { system: 'Be brief.', messages: [user('Hi')], maxTokens: 50, temperature: 0.1 });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello there' }]);
    assert.equal(result.stopReason, 'end_turn');
    assert.deepEqual(result.usage, { inputTokens: 12, outputTokens: 3 });
    assert.equal(result.provider, 'ollama');
    const sent = h.fake.requests.at(-1)!;
    assert.equal(sent.path, '/api/chat');
    assert.equal(sent.headers.authorization, undefined);
    assert.equal(sent.body.stream, false);
    assert.deepEqual(sent.body.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    assert.deepEqual(sent.body.options, { num_predict: 50, temperature: 0.1 });
    assert.deepEqual(h.calls.at(-1)!.usage, { inputTokens: 12, outputTokens: 3 });
  });

  it('streams NDJSON text deltas in order, with usage from the final line', async () => {
    h.fake.enqueue({ text: 'The quick brown fox', chunkSize: 5, usage: { input: 7, output: 4 } });
    const events = await collect(h.llm.stream(ref, { messages: [user('Go')] }));
    assert.deepEqual(
      events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])),
      ['The q', 'uick ', 'brown', ' fox'],
    );
    const done = events.at(-1) as Extract<StreamEvent, { type: 'done' }>;
    assert.deepEqual(done.result.content, [{ type: 'text', text: 'The quick brown fox' }]);
    assert.deepEqual(done.result.usage, { inputTokens: 7, outputTokens: 4 });
    assert.equal(h.fake.requests.at(-1)!.body.stream, true);
  });

  it('round-trips a tool call: tools sent, tool_calls parsed, result sent back as a tool message', async () => {
    h.fake.enqueue({ text: 'Checking.', toolCalls: [{ name: 'get_weather', input: { city: 'Paris', days: [1, 2] } }] });
    const events = await collect(h.llm.stream(ref, { messages: [user('Weather in Paris?')], tools: [weather] }));
    assert.deepEqual(
      events.filter((e) => e.type !== 'text_delta').map((e) => e.type),
      ['tool_use_start', 'tool_use_end', 'done'],
    );
    const done = events.at(-1) as Extract<StreamEvent, { type: 'done' }>;
    assert.equal(done.result.stopReason, 'tool_use');
    const call = done.result.content[1];
    assert.ok(call?.type === 'tool_use');
    assert.deepEqual([call.name, call.input], ['get_weather', { city: 'Paris', days: [1, 2] }]);
    assert.deepEqual(h.fake.requests.at(-1)!.body.tools, [
      { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: weather.inputSchema } },
    ]);

    h.fake.enqueue({ text: 'Sunny.' });
    const history: ChatMessage[] = [
      user('Weather in Paris?'),
      { role: 'assistant', content: done.result.content },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: call.id, content: '22°C, sunny' }] },
    ];
    const next = await h.llm.complete(ref, { messages: history, tools: [weather] });
    assert.deepEqual(next.content, [{ type: 'text', text: 'Sunny.' }]);
    assert.deepEqual((h.fake.requests.at(-1)!.body.messages as unknown[]).slice(1), [
      { role: 'assistant', content: 'Checking.', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris', days: [1, 2] } } }] },
      { role: 'tool', content: '22°C, sunny', tool_name: 'get_weather' },
    ]);
  });

  it('parses a non-streamed tool call and sends images as base64', async () => {
    h.fake.enqueue({ toolCalls: [{ name: 'get_weather', input: { city: 'Oslo' } }] });
    const result = await h.llm.complete(ref, {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Where?' },
            { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
          ],
        },
      ],
      tools: [weather],
    });
    assert.equal(result.stopReason, 'tool_use');
    assert.deepEqual(result.content, [{ type: 'tool_use', id: 'call_0_get_weather', name: 'get_weather', input: { city: 'Oslo' } }]);
    assert.deepEqual((h.fake.requests.at(-1)!.body.messages as unknown[])[0], { role: 'user', content: 'Where?', images: ['iVBORw0KGgo='] });
  });

  it('retries a 503 and maps a final failure to LlmError', async () => {
    h.fake.enqueue({ status: 503, retryAfter: 0 }, { text: 'ok now' });
    const result = await h.llm.complete(ref, { messages: [user('again')] });
    assert.deepEqual(result.content, [{ type: 'text', text: 'ok now' }]);
    assert.deepEqual(
      h.calls.slice(-2).map((c) => c.ok),
      [false, true],
    );

    h.fake.enqueue({ status: 404 });
    await assert.rejects(
      h.llm.complete(ref, { messages: [user('no')] }),
      (err: unknown) => err instanceof LlmError && err.status === 404 && /scripted error 404/.test(err.message),
    );
  });

  it('the fake lists its models on GET /api/tags in the shape the ollama client reads', async () => {
    const { models } = await new Ollama({ host: h.fake.url }).list();
    assert.deepEqual(
      models.map((m) => m.name),
      ['fake-model:latest'],
    );
  });

  it('abort cancels a streaming request mid-stream', async () => {
    h.fake.enqueue({ text: 'z'.repeat(50), chunkSize: 1, chunkDelayMs: 10 });
    const controller = new AbortController();
    let deltas = 0;
    await assert.rejects(
      (async () => {
        for await (const e of h.llm.stream(ref, { messages: [user('x')], signal: controller.signal })) {
          if (e.type === 'text_delta' && ++deltas === 2) controller.abort();
        }
      })(),
      { name: 'AbortError' },
    );
    const end = Date.now() + 2000;
    while (!h.fake.requests.at(-1)!.aborted && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.equal(h.fake.requests.at(-1)!.aborted, true);
  });
});

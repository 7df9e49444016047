import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startLlmHarness, collect, user, weather, TEST_KEY_ENV, type LlmHarness } from '../../llm/test/support.ts';
import { LlmError, type ChatMessage, type StreamEvent } from '../../llm/api.ts';

const ref = { provider: 'gemini', model: 'gemini-test', apiKeyEnv: TEST_KEY_ENV };

describe('llm-gemini driver over generateContent', () => {
  let h: LlmHarness;
  before(async () => {
    h = await startLlmHarness(['llm', 'llm-gemini'], (url) => `[provider_urls]\ngemini = "${url}"`);
  });
  after(() => h.stop());

  it('answers a text completion with usageMetadata, sending the key and the system instruction', async () => {
    h.fake.enqueue({ text: 'Hello there', usage: { input: 12, output: 3 } });
    const result = await h.llm.complete(ref, { system: 'Be brief.', messages: [user('Hi')], maxTokens: 50, temperature: 0.1 });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello there' }]);
    assert.equal(result.stopReason, 'end_turn');
    assert.deepEqual(result.usage, { inputTokens: 12, outputTokens: 3 });
    assert.equal(result.provider, 'gemini');
    const sent = h.fake.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-test:generateContent');
    assert.equal(sent.headers['x-goog-api-key'], 'sk-test-key');
    assert.deepEqual(sent.body.contents, [{ role: 'user', parts: [{ text: 'Hi' }] }]);
    assert.deepEqual(sent.body.systemInstruction, { parts: [{ text: 'Be brief.' }], role: 'user' });
    assert.deepEqual(sent.body.generationConfig, { maxOutputTokens: 50, temperature: 0.1 });
    assert.deepEqual(h.calls.at(-1)!.usage, { inputTokens: 12, outputTokens: 3 });
  });

  it('streams text deltas in order over SSE, with usage from the last chunk', async () => {
    h.fake.enqueue({ text: 'The quick brown fox', chunkSize: 5, usage: { input: 7, output: 4 } });
    const events = await collect(h.llm.stream(ref, { messages: [user('Go')] }));
    assert.deepEqual(
      events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])),
      ['The q', 'uick ', 'brown', ' fox'],
    );
    const done = events.at(-1) as Extract<StreamEvent, { type: 'done' }>;
    assert.deepEqual(done.result.content, [{ type: 'text', text: 'The quick brown fox' }]);
    assert.deepEqual(done.result.usage, { inputTokens: 7, outputTokens: 4 });
    assert.equal(h.fake.requests.at(-1)!.path, '/v1beta/models/gemini-test:streamGenerateContent?alt=sse');
  });

  it('round-trips a function call: declarations sent, functionCall parsed, functionResponse sent back by name', async () => {
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
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(call.input, { city: 'Paris', days: [1, 2] });
    assert.deepEqual(h.fake.requests.at(-1)!.body.tools, [
      { functionDeclarations: [{ name: 'get_weather', description: 'Weather of a city', parametersJsonSchema: weather.inputSchema }] },
    ]);

    h.fake.enqueue({ text: 'Sunny.' });
    const history: ChatMessage[] = [
      user('Weather in Paris?'),
      { role: 'assistant', content: done.result.content },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: call.id, content: '22°C, sunny' }] },
    ];
    const next = await h.llm.complete(ref, { messages: history, tools: [weather] });
    assert.deepEqual(next.content, [{ type: 'text', text: 'Sunny.' }]);
    assert.deepEqual((h.fake.requests.at(-1)!.body.contents as unknown[]).slice(1), [
      { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { id: call.id, name: 'get_weather', args: { city: 'Paris', days: [1, 2] } } }] },
      { role: 'user', parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { output: '22°C, sunny' } } }] },
    ]);
  });

  it('parses a non-streamed function call and sends images as inlineData', async () => {
    h.fake.enqueue({ toolCalls: [{ id: 'fc-1', name: 'get_weather', input: { city: 'Oslo' } }] });
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
    assert.deepEqual(result.content, [{ type: 'tool_use', id: 'fc-1', name: 'get_weather', input: { city: 'Oslo' } }]);
    assert.deepEqual((h.fake.requests.at(-1)!.body.contents as Array<{ parts: unknown[] }>)[0].parts[1], {
      inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' },
    });
  });

  it('retries a 429 with Retry-After and maps a final failure to LlmError', async () => {
    h.fake.enqueue({ status: 429, retryAfter: 0 }, { text: 'ok now' });
    const result = await h.llm.complete(ref, { messages: [user('again')] });
    assert.deepEqual(result.content, [{ type: 'text', text: 'ok now' }]);
    assert.deepEqual(
      h.calls.slice(-2).map((c) => c.ok),
      [false, true],
    );

    h.fake.enqueue({ status: 403 });
    await assert.rejects(
      h.llm.complete(ref, { messages: [user('no')] }),
      (err: unknown) => err instanceof LlmError && err.status === 403 && /scripted error 403/.test(err.message),
    );
  });

  it('abort cancels the in-flight request', async () => {
    h.fake.enqueue({ text: 'late', delayMs: 3000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(h.llm.complete(ref, { messages: [user('x')], signal: controller.signal }), { name: 'AbortError' });
    const end = Date.now() + 2000;
    while (!h.fake.requests.at(-1)!.aborted && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.equal(h.fake.requests.at(-1)!.aborted, true);
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startLlmHarness, collect, user, weather, TEST_KEY_ENV, type LlmHarness } from '../../llm/test/support.ts';
import type { ChatMessage, StreamEvent } from '../../llm/api.ts';

const ref = { provider: 'anthropic', model: 'claude-test', apiKeyEnv: TEST_KEY_ENV };

describe('llm-anthropic driver over the Messages API', () => {
  let h: LlmHarness;
  before(async () => {
    h = await startLlmHarness(['llm', 'llm-anthropic'], (url) => `[provider_urls]\nanthropic = "${url}"`);
  });
  after(() => h.stop());

  it('answers a text completion with usage, sending key, version and the system prompt', async () => {
    h.fake.enqueue({ text: 'Hello there', usage: { input: 12, output: 3 } });
    const result = await h.llm.complete(ref, { system: 'Be brief.', messages: [user('Hi')] });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello there' }]);
    assert.equal(result.stopReason, 'end_turn');
    assert.deepEqual(result.usage, { inputTokens: 12, outputTokens: 3 });
    assert.equal(result.provider, 'anthropic');
    const sent = h.fake.requests.at(-1)!;
    assert.equal(sent.path, '/v1/messages');
    // This SDK version sends the key as a bearer token.
    assert.equal(sent.headers.authorization ?? sent.headers['x-api-key'], sent.headers.authorization ? 'Bearer sk-test-key' : 'sk-test-key');
    assert.ok(sent.headers['anthropic-version']);
    assert.equal(sent.body.system, 'Be brief.');
    assert.equal(sent.body.max_tokens, 4096);
    assert.deepEqual(sent.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
    assert.deepEqual(h.calls.at(-1)!.usage, { inputTokens: 12, outputTokens: 3 });
  });

  it('streams text deltas in order with usage from message_start and message_delta', async () => {
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

  it('round-trips a tool call: schema sent, partial JSON assembled, tool_result block sent back', async () => {
    h.fake.enqueue({ text: 'Checking.', toolCalls: [{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } }] });
    const events = await collect(h.llm.stream(ref, { messages: [user('Weather in Paris?')], tools: [weather] }));
    assert.deepEqual(
      events.filter((e) => e.type !== 'text_delta').map((e) => e.type),
      ['tool_use_start', 'tool_use_end', 'done'],
    );
    const done = events.at(-1) as Extract<StreamEvent, { type: 'done' }>;
    assert.equal(done.result.stopReason, 'tool_use');
    assert.deepEqual(done.result.content, [
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } },
    ]);
    assert.deepEqual(h.fake.requests.at(-1)!.body.tools, [{ name: 'get_weather', description: 'Weather of a city', input_schema: weather.inputSchema }]);

    h.fake.enqueue({ text: 'Sunny.' });
    const history: ChatMessage[] = [
      user('Weather in Paris?'),
      { role: 'assistant', content: done.result.content },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'no data', isError: true }] },
    ];
    const next = await h.llm.complete(ref, { messages: history, tools: [weather] });
    assert.deepEqual(next.content, [{ type: 'text', text: 'Sunny.' }]);
    assert.deepEqual((h.fake.requests.at(-1)!.body.messages as unknown[]).slice(1), [
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'no data', is_error: true }] },
    ]);
  });

  it('parses a non-streamed tool call and sends images as base64 sources', async () => {
    h.fake.enqueue({ toolCalls: [{ id: 'toolu_2', name: 'get_weather', input: { city: 'Oslo' } }] });
    const result = await h.llm.complete(ref, {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
            { type: 'text', text: 'Where?' },
          ],
        },
      ],
      tools: [weather],
      maxTokens: 100,
    });
    assert.equal(result.stopReason, 'tool_use');
    assert.deepEqual(result.content, [{ type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Oslo' } }]);
    const sent = h.fake.requests.at(-1)!;
    assert.equal(sent.body.max_tokens, 100);
    assert.deepEqual((sent.body.messages as Array<{ content: unknown[] }>)[0].content[0], {
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
    });
  });

  it('maps a scripted 529-style overload to a retried call, then succeeds', async () => {
    h.fake.enqueue({ status: 529 }, { text: 'back' });
    const result = await h.llm.complete(ref, { messages: [user('again')] });
    assert.deepEqual(result.content, [{ type: 'text', text: 'back' }]);
    assert.deepEqual(
      h.calls.slice(-2).map((c) => c.ok),
      [false, true],
    );
  });
});

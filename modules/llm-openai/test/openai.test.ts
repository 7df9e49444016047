import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startLlmHarness, collect, user, weather, TEST_KEY_ENV, type LlmHarness } from '../../llm/test/support.ts';
import type { ChatMessage, StreamEvent } from '../../llm/api.ts';

const ref = { provider: 'default', model: 'default' };

describe('llm-openai driver over the OpenAI wire format', () => {
  let h: LlmHarness;
  before(async () => {
    h = await startLlmHarness(
      ['llm', 'llm-openai'],
      (url) => `[default_model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\nbase_url = "${url}/v1"\napi_key_env = "${TEST_KEY_ENV}"`,
    );
  });
  after(() => h.stop());

  it('answers a text completion with usage, sending the key and the system prompt', async () => {
    h.fake.enqueue({ text: 'Hello there', usage: { input: 12, output: 3 } });
    const result = await h.llm.complete(ref, { system: 'Be brief.', messages: [user('Hi')], meta: { purpose: 'test' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello there' }]);
    assert.equal(result.stopReason, 'end_turn');
    assert.deepEqual(result.usage, { inputTokens: 12, outputTokens: 3 });
    assert.equal(result.provider, 'openai');
    const sent = h.fake.requests.at(-1)!;
    assert.equal(sent.path, '/v1/chat/completions');
    assert.equal(sent.headers.authorization, 'Bearer sk-test-key');
    assert.equal(sent.body.model, 'gpt-4o-mini');
    assert.deepEqual(sent.body.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    const record = h.calls.at(-1)!;
    assert.equal(record.ok, true);
    assert.deepEqual(record.usage, { inputTokens: 12, outputTokens: 3 });
    assert.equal(record.meta.purpose, 'test');
  });

  it('streams text deltas in order and ends with the assembled result and usage', async () => {
    h.fake.enqueue({ text: 'The quick brown fox', chunkSize: 5, usage: { input: 7, output: 4 } });
    const events = await collect(h.llm.stream(ref, { messages: [user('Go')] }));
    const deltas = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []));
    assert.deepEqual(deltas, ['The q', 'uick ', 'brown', ' fox']);
    const done = events.at(-1) as Extract<StreamEvent, { type: 'done' }>;
    assert.equal(done.type, 'done');
    assert.deepEqual(done.result.content, [{ type: 'text', text: 'The quick brown fox' }]);
    assert.deepEqual(done.result.usage, { inputTokens: 7, outputTokens: 4 });
    const sent = h.fake.requests.at(-1)!;
    assert.equal(sent.body.stream, true);
    assert.deepEqual(sent.body.stream_options, { include_usage: true });
    assert.deepEqual(h.calls.at(-1)!.usage, { inputTokens: 7, outputTokens: 4 });
  });

  it('round-trips a tool call: schema sent, streamed call assembled, result sent back as a tool message', async () => {
    h.fake.enqueue({ text: 'Checking.', toolCalls: [{ id: 'call_abc', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } }] });
    const events = await collect(h.llm.stream(ref, { messages: [user('Weather in Paris?')], tools: [weather] }));
    assert.deepEqual(
      events.filter((e) => e.type !== 'text_delta').map((e) => e.type),
      ['tool_use_start', 'tool_use_end', 'done'],
    );
    const end = events.find((e) => e.type === 'tool_use_end') as Extract<StreamEvent, { type: 'tool_use_end' }>;
    assert.deepEqual(end, { type: 'tool_use_end', id: 'call_abc', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } });
    const done = events.at(-1) as Extract<StreamEvent, { type: 'done' }>;
    assert.equal(done.result.stopReason, 'tool_use');
    assert.deepEqual(done.result.content, [
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_abc', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } },
    ]);
    assert.deepEqual(h.fake.requests.at(-1)!.body.tools, [
      { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: weather.inputSchema } },
    ]);

    h.fake.enqueue({ text: 'Sunny.' });
    const history: ChatMessage[] = [
      user('Weather in Paris?'),
      { role: 'assistant', content: done.result.content },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_abc', content: '22°C, sunny' }] },
    ];
    const next = await h.llm.complete(ref, { messages: history, tools: [weather] });
    assert.deepEqual(next.content, [{ type: 'text', text: 'Sunny.' }]);
    assert.deepEqual((h.fake.requests.at(-1)!.body.messages as unknown[]).slice(1), [
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":[1,2]}' } }],
      },
      { role: 'tool', tool_call_id: 'call_abc', content: '22°C, sunny' },
    ]);
  });

  it('parses a non-streamed tool call and sends images as data URLs', async () => {
    h.fake.enqueue({ toolCalls: [{ id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } }] });
    const result = await h.llm.complete(ref, {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What city is this?' },
            { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
          ],
        },
      ],
      tools: [weather],
    });
    assert.equal(result.stopReason, 'tool_use');
    assert.deepEqual(result.content, [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } }]);
    assert.deepEqual((h.fake.requests.at(-1)!.body.messages as unknown[])[0], {
      role: 'user',
      content: [
        { type: 'text', text: 'What city is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    });
  });

  it('maps max_tokens and passes maxTokens and temperature', async () => {
    h.fake.enqueue({ text: 'cut', stopReason: 'max_tokens' });
    const result = await h.llm.complete(ref, { messages: [user('long')], maxTokens: 5, temperature: 0.2 });
    assert.equal(result.stopReason, 'max_tokens');
    assert.equal(h.fake.requests.at(-1)!.body.max_tokens, 5);
    assert.equal(h.fake.requests.at(-1)!.body.temperature, 0.2);
  });
});

import { it } from 'node:test';
import assert from 'node:assert/strict';
import { collect, driverConformance, LLM_TEST_KEY_ENV, userMessage, weatherTool } from '@talon/testing';

const ref = { provider: 'anthropic', model: 'claude-test', apiKeyEnv: LLM_TEST_KEY_ENV };

driverConformance({ name: 'llm-anthropic', only: ['llm-anthropic'], ref, config: (url) => `[provider_urls]\nanthropic = "${url}"` }, (harness) => {
  it('sends key, version, the system prompt and a default max_tokens to /v1/messages', async () => {
    const h = harness();
    await h.llm.complete(ref, { system: 'Be brief.', messages: [userMessage('Hi')] });
    const sent = h.fake.requests.at(-1)!;
    assert.equal(sent.path, '/v1/messages');
    // This SDK version sends the key as a bearer token.
    assert.equal(sent.headers.authorization ?? sent.headers['x-api-key'], sent.headers.authorization ? 'Bearer sk-test-key' : 'sk-test-key');
    assert.ok(sent.headers['anthropic-version']);
    assert.equal(sent.body.system, 'Be brief.');
    assert.equal(sent.body.max_tokens, 4096);
    assert.deepEqual(sent.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
    await h.llm.complete(ref, { messages: [userMessage('Hi')], maxTokens: 100 });
    assert.equal(h.fake.requests.at(-1)!.body.max_tokens, 100);
  });

  it('streams with stream: true', async () => {
    const h = harness();
    await collect(h.llm.stream(ref, { messages: [userMessage('Go')] }));
    assert.equal(h.fake.requests.at(-1)!.body.stream, true);
  });

  it('sends tools with input_schema, tool calls as tool_use blocks and results as tool_result blocks', async () => {
    const h = harness();
    const call = { type: 'tool_use' as const, id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } };
    await h.llm.complete(ref, {
      messages: [
        userMessage('Weather in Paris?'),
        { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, call] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'no data', isError: true }] },
      ],
      tools: [weatherTool],
    });
    const sent = h.fake.requests.at(-1)!;
    assert.deepEqual(sent.body.tools, [{ name: 'get_weather', description: 'Weather of a city', input_schema: weatherTool.inputSchema }]);
    assert.deepEqual((sent.body.messages as unknown[]).slice(1), [
      { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, call] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'no data', is_error: true }] },
    ]);
  });

  it('sends images as base64 sources', async () => {
    const h = harness();
    await h.llm.complete(ref, {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
            { type: 'text', text: 'Where?' },
          ],
        },
      ],
    });
    assert.deepEqual((h.fake.requests.at(-1)!.body.messages as Array<{ content: unknown[] }>)[0].content[0], {
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
    });
  });

  it('retries a 529 overload', async () => {
    const h = harness();
    h.fake.enqueue({ status: 529 }, { text: 'back' });
    const result = await h.llm.complete(ref, { messages: [userMessage('again')] });
    assert.deepEqual(result.content, [{ type: 'text', text: 'back' }]);
    assert.deepEqual(
      h.calls.slice(-2).map((c) => c.ok),
      [false, true],
    );
  });
});

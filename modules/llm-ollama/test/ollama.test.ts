import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Ollama } from 'ollama';
import { collect, driverConformance, userMessage, weatherTool } from '@talon/testing';

const ref = { provider: 'ollama', model: 'llama-test' };

// A /v1 suffix (the OpenAI-compatible address) is stripped for the native API.
driverConformance({ name: 'llm-ollama', only: ['llm-ollama'], ref, config: (url) => `[provider_urls]\nollama = "${url}/v1"` }, (harness) => {
  it('posts to the native /api/chat without a key, the system prompt first, limits as options', async () => {
    const h = harness();
    await h.llm.complete(ref, { system: 'Be brief.', messages: [userMessage('Hi')], maxTokens: 50, temperature: 0.1 });
    const sent = h.fake.requests.at(-1)!;
    assert.equal(sent.path, '/api/chat');
    assert.equal(sent.headers.authorization, undefined);
    assert.equal(sent.body.stream, false);
    assert.deepEqual(sent.body.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    assert.deepEqual(sent.body.options, { num_predict: 50, temperature: 0.1 });
  });

  it('streams NDJSON with stream: true', async () => {
    const h = harness();
    await collect(h.llm.stream(ref, { messages: [userMessage('Go')] }));
    assert.equal(h.fake.requests.at(-1)!.body.stream, true);
  });

  it('sends tools as functions, calls as assistant tool_calls and results as tool messages named by the tool', async () => {
    const h = harness();
    const call = { type: 'tool_use' as const, id: 'call_0_get_weather', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } };
    await h.llm.complete(ref, {
      messages: [
        userMessage('Weather in Paris?'),
        { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, call] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: call.id, content: '22°C, sunny' }] },
      ],
      tools: [weatherTool],
    });
    const sent = h.fake.requests.at(-1)!;
    assert.deepEqual(sent.body.tools, [
      { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: weatherTool.inputSchema } },
    ]);
    assert.deepEqual((sent.body.messages as unknown[]).slice(1), [
      { role: 'assistant', content: 'Checking.', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris', days: [1, 2] } } }] },
      { role: 'tool', content: '22°C, sunny', tool_name: 'get_weather' },
    ]);
  });

  it('gives id-less tool calls a stable id and sends images as base64', async () => {
    const h = harness();
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
      tools: [weatherTool],
    });
    assert.deepEqual(result.content, [{ type: 'tool_use', id: 'call_0_get_weather', name: 'get_weather', input: { city: 'Oslo' } }]);
    assert.deepEqual((h.fake.requests.at(-1)!.body.messages as unknown[])[0], { role: 'user', content: 'Where?', images: ['iVBORw0KGgo='] });
  });

  it('the fake lists its models on GET /api/tags in the shape the ollama client reads', async () => {
    const { models } = await new Ollama({ host: harness().fake.url }).list();
    assert.deepEqual(
      models.map((m) => m.name),
      ['fake-model:latest'],
    );
  });
});

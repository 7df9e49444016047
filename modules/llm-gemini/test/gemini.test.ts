import { it } from 'node:test';
import assert from 'node:assert/strict';
import { collect, driverConformance, LLM_TEST_KEY_ENV, userMessage, weatherTool } from '@talon/testing';

const ref = { provider: 'gemini', model: 'gemini-test', apiKeyEnv: LLM_TEST_KEY_ENV };

driverConformance({ name: 'llm-gemini', only: ['llm-gemini'], ref, config: (url) => `[provider_urls]\ngemini = "${url}"` }, (harness) => {
  it('sends the key, the contents, the system instruction and the generation config to generateContent', async () => {
    const h = harness();
    await h.llm.complete(ref, { system: 'Be brief.', messages: [userMessage('Hi')], maxTokens: 50, temperature: 0.1 });
    const sent = h.fake.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-test:generateContent');
    assert.equal(sent.headers['x-goog-api-key'], 'sk-test-key');
    assert.deepEqual(sent.body.contents, [{ role: 'user', parts: [{ text: 'Hi' }] }]);
    assert.deepEqual(sent.body.systemInstruction, { parts: [{ text: 'Be brief.' }], role: 'user' });
    assert.deepEqual(sent.body.generationConfig, { maxOutputTokens: 50, temperature: 0.1 });
  });

  it('streams over SSE from streamGenerateContent', async () => {
    const h = harness();
    await collect(h.llm.stream(ref, { messages: [userMessage('Go')] }));
    assert.equal(h.fake.requests.at(-1)!.path, '/v1beta/models/gemini-test:streamGenerateContent?alt=sse');
  });

  it('sends function declarations, calls as functionCall parts and results as functionResponse by name', async () => {
    const h = harness();
    const call = { type: 'tool_use' as const, id: 'fc-1', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } };
    await h.llm.complete(ref, {
      messages: [
        userMessage('Weather in Paris?'),
        { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, call] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 'fc-1', content: '22°C, sunny' }] },
      ],
      tools: [weatherTool],
    });
    const sent = h.fake.requests.at(-1)!;
    assert.deepEqual(sent.body.tools, [
      { functionDeclarations: [{ name: 'get_weather', description: 'Weather of a city', parametersJsonSchema: weatherTool.inputSchema }] },
    ]);
    assert.deepEqual((sent.body.contents as unknown[]).slice(1), [
      { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { id: 'fc-1', name: 'get_weather', args: { city: 'Paris', days: [1, 2] } } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'fc-1', name: 'get_weather', response: { output: '22°C, sunny' } } }] },
    ]);
  });

  it('sends images as inlineData', async () => {
    const h = harness();
    await h.llm.complete(ref, {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Where?' },
            { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
          ],
        },
      ],
    });
    assert.deepEqual((h.fake.requests.at(-1)!.body.contents as Array<{ parts: unknown[] }>)[0].parts[1], {
      inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' },
    });
  });
});

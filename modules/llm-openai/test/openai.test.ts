import { it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { collect, driverConformance, LLM_TEST_KEY_ENV, userMessage, weatherTool } from '@talon/testing';

// Through [default_model], the way most installations reach an OpenAI-compatible provider.
driverConformance(
  {
    name: 'llm-openai',
    only: ['llm-openai'],
    ref: { provider: 'default', model: 'default' },
    config: (url) => `[default_model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\nbase_url = "${url}/v1"\napi_key_env = "${LLM_TEST_KEY_ENV}"`,
  },
  (harness) => {
    const ref = { provider: 'default', model: 'default' };

    it('sends the key as a bearer token, the model and the system prompt as the first message', async () => {
      const h = harness();
      await h.llm.complete(ref, { system: 'Be brief.', messages: [userMessage('Hi')], maxTokens: 5, temperature: 0.2 });
      const sent = h.fake.requests.at(-1)!;
      assert.equal(sent.path, '/v1/chat/completions');
      assert.equal(sent.headers.authorization, 'Bearer sk-test-key');
      assert.equal(sent.body.model, 'gpt-4o-mini');
      assert.deepEqual(sent.body.messages, [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ]);
      assert.equal(sent.body.max_tokens, 5);
      assert.equal(sent.body.temperature, 0.2);
    });

    it('asks for usage in streams', async () => {
      const h = harness();
      await collect(h.llm.stream(ref, { messages: [userMessage('Go')] }));
      const sent = h.fake.requests.at(-1)!;
      assert.equal(sent.body.stream, true);
      assert.deepEqual(sent.body.stream_options, { include_usage: true });
    });

    it('sends tools as functions, tool calls as assistant tool_calls and results as tool messages', async () => {
      const h = harness();
      const call = { type: 'tool_use' as const, id: 'call_abc', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } };
      await h.llm.complete(ref, {
        messages: [
          userMessage('Weather in Paris?'),
          { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, call] },
          { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_abc', content: '22°C, sunny' }] },
        ],
        tools: [weatherTool],
      });
      const sent = h.fake.requests.at(-1)!;
      assert.deepEqual(sent.body.tools, [
        { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: weatherTool.inputSchema } },
      ]);
      assert.deepEqual((sent.body.messages as unknown[]).slice(1), [
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":[1,2]}' } }],
        },
        { role: 'tool', tool_call_id: 'call_abc', content: '22°C, sunny' },
      ]);
    });

    it('sends no Authorization header to a keyless server', async () => {
      const h = harness();
      await h.llm.complete({ provider: 'vllm', model: 'local-model', baseUrl: `${h.fake.url}/v1` }, { messages: [userMessage('Hi')] });
      const sent = h.fake.requests.at(-1)!;
      assert.equal(sent.body.model, 'local-model');
      assert.equal(sent.headers.authorization, undefined);
    });

    it('ends a stream whose provider reports an error in it with an LlmError carrying the message', async () => {
      const h = harness();
      const server = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
        res.end('data: {"error":{"message":"the model is overloaded"}}\n\n');
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      try {
        const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
        await assert.rejects(collect(h.llm.stream({ provider: 'vllm', model: 'm', baseUrl }, { messages: [userMessage('Hi')] })), (err: Error) => {
          assert.equal(err.name, 'LlmError');
          assert.match(err.message, /reported an error in the stream: the model is overloaded/);
          return true;
        });
      } finally {
        server.close();
      }
    });

    it('keeps one connection for successive streamed calls (each answer read to its end)', async () => {
      const h = harness();
      let connections = 0;
      const server = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n');
        res.end('data: [DONE]\n\n');
      });
      server.on('connection', () => connections++);
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      try {
        const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
        for (let i = 0; i < 3; i++) await collect(h.llm.stream({ provider: 'vllm', model: 'm', baseUrl }, { messages: [userMessage('Hi')] }));
        assert.equal(connections, 1);
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });

    it('sends images as data URLs', async () => {
      const h = harness();
      await h.llm.complete(ref, {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What city is this?' },
              { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
            ],
          },
        ],
      });
      assert.deepEqual((h.fake.requests.at(-1)!.body.messages as unknown[])[0], {
        role: 'user',
        content: [
          { type: 'text', text: 'What city is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      });
    });
  },
);

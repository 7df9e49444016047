/**
 * The behaviour every LLM driver module owes the llm service, as node:test cases: a driver is run
 * through `llm.service` against the scripted FakeProvider (which speaks the OpenAI, Anthropic,
 * Gemini and Ollama wire formats). A driver's own test file calls driverConformance once and adds
 * the checks of its wire format (what exactly is sent) in `more`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { collect, startLlmHarness, userMessage, weatherTool, type LlmHarness, type TestModelRef, type TestStreamEvent } from './llm.ts';
import { waitFor } from './wait.ts';

export interface DriverConformanceOptions {
  /** Title of the suite, e.g. 'llm-openai'. */
  name: string;
  /** The modules to boot: the driver module (the llm module and the catalog come as its dependencies). */
  only: string[];
  /** What the suite calls; with `apiKeyEnv: LLM_TEST_KEY_ENV` for providers that need a key. */
  ref: TestModelRef;
  /** config.toml text that sends the provider to the fake, given the fake's base URL. */
  config: (fakeUrl: string) => string;
}

type Done = Extract<TestStreamEvent, { type: 'done' }>;

const deltas = (events: TestStreamEvent[]) => events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []));

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof Error, `rejected with a non-error: ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

/** Registers the conformance suite; `more` adds the driver's own cases, with the same running harness. */
export function driverConformance(options: DriverConformanceOptions, more?: (harness: () => LlmHarness) => void): void {
  const { ref } = options;
  describe(`${options.name}: driver conformance`, () => {
    let h: LlmHarness;
    before(async () => {
      h = await startLlmHarness(options.only, options.config);
    });
    after(() => h?.stop());

    it('answers a text completion with its usage; afterCall meters it', async () => {
      h.fake.enqueue({ text: 'Hello there', usage: { input: 12, output: 3 } });
      const result = await h.llm.complete(ref, { system: 'Be brief.', messages: [userMessage('Hi')], meta: { purpose: 'test' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'Hello there' }]);
      assert.equal(result.stopReason, 'end_turn');
      assert.deepEqual(result.usage, { inputTokens: 12, outputTokens: 3 });
      const record = h.calls.at(-1)!;
      assert.equal(record.ok, true);
      assert.deepEqual(record.usage, { inputTokens: 12, outputTokens: 3 });
      assert.equal(record.meta.purpose, 'test');
      assert.equal(record.provider, result.provider);
    });

    it('streams text deltas in order and ends with the assembled result and usage', async () => {
      h.fake.enqueue({ text: 'The quick brown fox', chunkSize: 5, usage: { input: 7, output: 4 } });
      const events = await collect(h.llm.stream(ref, { messages: [userMessage('Go')] }));
      assert.deepEqual(deltas(events), ['The q', 'uick ', 'brown', ' fox']);
      const done = events.at(-1) as Done;
      assert.equal(done.type, 'done');
      assert.deepEqual(done.result.content, [{ type: 'text', text: 'The quick brown fox' }]);
      assert.deepEqual(done.result.usage, { inputTokens: 7, outputTokens: 4 });
      assert.deepEqual(h.calls.at(-1)!.usage, { inputTokens: 7, outputTokens: 4 });
    });

    it('streams a tool call with its parsed input, and takes the tool result back', async () => {
      h.fake.enqueue({ text: 'Checking.', toolCalls: [{ id: 'call_abc', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } }] });
      const events = await collect(h.llm.stream(ref, { messages: [userMessage('Weather in Paris?')], tools: [weatherTool] }));
      assert.deepEqual(
        events.filter((e) => e.type !== 'text_delta').map((e) => e.type),
        ['tool_use_start', 'tool_use_end', 'done'],
      );
      const done = events.at(-1) as Done;
      assert.equal(done.result.stopReason, 'tool_use');
      assert.deepEqual(done.result.content[0], { type: 'text', text: 'Checking.' });
      const call = done.result.content[1];
      assert.ok(call?.type === 'tool_use', 'the second block is the tool call');
      assert.deepEqual([call.name, call.input], ['get_weather', { city: 'Paris', days: [1, 2] }]);
      assert.ok(call.id, 'the call has an id');
      const end = events.find((e) => e.type === 'tool_use_end');
      assert.deepEqual(end, { type: 'tool_use_end', id: call.id, name: 'get_weather', input: { city: 'Paris', days: [1, 2] } });

      h.fake.enqueue({ text: 'Sunny.' });
      const next = await h.llm.complete(ref, {
        messages: [
          userMessage('Weather in Paris?'),
          { role: 'assistant', content: done.result.content },
          { role: 'user', content: [{ type: 'tool_result', toolUseId: call.id, content: '22°C, sunny' }] },
        ],
        tools: [weatherTool],
      });
      assert.deepEqual(next.content, [{ type: 'text', text: 'Sunny.' }]);
    });

    it('returns a tool call of a non-streamed answer', async () => {
      h.fake.enqueue({ toolCalls: [{ id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } }] });
      const result = await h.llm.complete(ref, { messages: [userMessage('Where?')], tools: [weatherTool] });
      assert.equal(result.stopReason, 'tool_use');
      assert.equal(result.content.length, 1);
      const call = result.content[0];
      assert.ok(call.type === 'tool_use');
      assert.deepEqual([call.name, call.input], ['get_weather', { city: 'Oslo' }]);
    });

    it('reports an answer cut by the token limit as max_tokens', async () => {
      h.fake.enqueue({ text: 'cut', stopReason: 'max_tokens' }, { text: 'cut', stopReason: 'max_tokens' });
      assert.equal((await h.llm.complete(ref, { messages: [userMessage('long')], maxTokens: 5 })).stopReason, 'max_tokens');
      const events = await collect(h.llm.stream(ref, { messages: [userMessage('long')], maxTokens: 5 }));
      assert.equal((events.at(-1) as Done).result.stopReason, 'max_tokens');
    });

    it('retries a 429 after its Retry-After, then succeeds', async () => {
      h.fake.enqueue({ status: 429, retryAfter: 1 }, { text: 'ok now' });
      const before = h.fake.requests.length;
      const started = Date.now();
      const result = await h.llm.complete(ref, { messages: [userMessage('again')] });
      assert.ok(Date.now() - started >= 950, 'waited for Retry-After (1 s), not the 5 ms backoff');
      assert.deepEqual(result.content, [{ type: 'text', text: 'ok now' }]);
      assert.equal(h.fake.requests.length - before, 2);
      assert.deepEqual(
        h.calls.slice(-2).map((c) => c.ok),
        [false, true],
      );
    });

    it("turns a provider's refusal into an LlmError with its status and message, not retried", async () => {
      h.fake.enqueue({ status: 403 });
      const before = h.fake.requests.length;
      const err = await rejection(h.llm.complete(ref, { messages: [userMessage('no')] }));
      assert.equal(err.name, 'LlmError');
      assert.equal((err as Error & { status?: number }).status, 403);
      assert.equal((err as Error & { retryable?: boolean }).retryable, false);
      assert.match(err.message, /scripted error 403/);
      assert.equal(h.fake.requests.length - before, 1);
    });

    it('ends a stream cut mid-answer with an LlmError, without asking again once content went out', async () => {
      h.fake.enqueue({ text: 'abcdefgh', chunkSize: 2, cutAfterChunks: 2 }, { text: 'must not be asked for' });
      const before = h.fake.requests.length;
      const seen: TestStreamEvent[] = [];
      const err = await rejection(
        (async () => {
          for await (const e of h.llm.stream(ref, { messages: [userMessage('Go')] })) seen.push(e);
        })(),
      );
      assert.equal(err.name, 'LlmError', `got ${err.name}: ${err.message}`);
      assert.deepEqual(deltas(seen), ['ab', 'cd']);
      assert.equal(h.fake.requests.length - before, 1);
      await h.llm.complete(ref, { messages: [userMessage('Go')] }); // takes the left-over reply
    });

    it('abort cancels the in-flight request, of a call and of a stream (which ends with what it streamed)', async () => {
      h.fake.enqueue({ text: 'late', delayMs: 3000 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = Date.now();
      const err = await rejection(h.llm.complete(ref, { messages: [userMessage('x')], signal: controller.signal }));
      assert.equal(err.name, 'AbortError');
      assert.ok(Date.now() - started < 1000);
      await waitFor(() => h.fake.requests.at(-1)!.aborted, 2000, 'the provider request to be aborted');

      h.fake.enqueue({ text: 'z'.repeat(50), chunkSize: 1, chunkDelayMs: 10 });
      const streamCtl = new AbortController();
      let seen = 0;
      let last: TestStreamEvent | undefined;
      for await (const e of h.llm.stream(ref, { messages: [userMessage('x')], signal: streamCtl.signal })) {
        last = e;
        if (e.type === 'text_delta' && ++seen === 2) streamCtl.abort();
      }
      // Stopped after content: the stream ends with a 'stopped' event carrying that content, not the abort error.
      assert.equal(last?.type, 'stopped');
      assert.equal(seen, 2);
      await waitFor(() => h.fake.requests.at(-1)!.aborted, 2000, 'the streaming request to be aborted');
    });

    more?.(() => h);
  });
}

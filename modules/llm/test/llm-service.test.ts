import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { collect, FakeProvider, LLM_TEST_KEY_ENV, setConfig, startLlmHarness, userMessage as user, waitFor, type LlmHarness } from '@talon/testing';
import { llmService, type LlmError, type LlmRefusedError, type LlmService, type StreamEvent } from '@talon/llm';

const ref = { provider: 'default', model: 'default' };
const ask = { messages: [user('Hi')] };

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  assert.fail('expected a rejection');
}

/** Errors cross bundles: they are recognised by name, as consumers do. */
function assertLlmError(err: Error): asserts err is LlmError {
  assert.equal(err.name, 'LlmError', `got ${err.name}: ${err.message}`);
  assert.equal(typeof (err as LlmError).retryable, 'boolean');
}

function assertRefusal(err: Error): asserts err is LlmRefusedError {
  assert.equal(err.name, 'LlmRefusedError', `got ${err.name}: ${err.message}`);
}

describe('llm service: retry, fallback, abort, hooks', () => {
  let h: LlmHarness;
  const llm = () => h.service<LlmService>(llmService.id);
  let backup: FakeProvider;
  before(async () => {
    h = await startLlmHarness(
      ['llm', 'llm-openai', 'llm-anthropic'],
      (url) => `[default_model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\nbase_url = "${url}/v1"\napi_key_env = "${LLM_TEST_KEY_ENV}"`,
    );
    backup = new FakeProvider();
    await backup.start();
  });
  after(async () => {
    await h.stop();
    await backup.stop();
  });
  beforeEach(() => {
    h.refuse = undefined;
  });

  it('retries a 429 after its Retry-After, then succeeds; afterCall sees both attempts', async () => {
    h.fake.enqueue({ status: 429, retryAfter: 1 }, { text: 'finally', usage: { input: 4, output: 2 } });
    const before = h.fake.requests.length;
    const calls = h.calls.length;
    const started = Date.now();
    const result = await llm().complete(ref, ask);
    assert.ok(Date.now() - started >= 950, 'waited for Retry-After (1 s) although retry_base_ms is 5');
    assert.deepEqual(result.content, [{ type: 'text', text: 'finally' }]);
    assert.equal(h.fake.requests.length - before, 2);
    const records = h.calls.slice(calls);
    assert.deepEqual(
      records.map((r) => r.ok),
      [false, true],
    );
    assert.match(records[0].error ?? '', /429/);
    assert.deepEqual(records[1].usage, { inputTokens: 4, outputTokens: 2 });
    assert.ok(records.every((r) => r.provider === 'openai' && r.model === 'gpt-4o-mini' && r.latencyMs >= 0));
  });

  it('retries 5xx answers with backoff', async () => {
    h.fake.enqueue({ status: 500 }, { status: 503, retryAfter: 0 }, { text: 'up again' });
    const before = h.fake.requests.length;
    const result = await llm().complete(ref, ask);
    assert.deepEqual(result.content, [{ type: 'text', text: 'up again' }]);
    assert.equal(h.fake.requests.length - before, 3);
  });

  it('gives up after max_retries with a clear LlmError', async () => {
    h.fake.enqueue(...Array.from({ length: 4 }, () => ({ status: 429, retryAfter: 0 })));
    const before = h.fake.requests.length;
    const err = await rejection(llm().complete(ref, ask));
    assertLlmError(err);
    assert.equal(err.status, 429);
    assert.equal(err.provider, 'openai');
    assert.match(err.message, /provider 'openai' answered 429: .*scripted error 429.*gave up after 4 attempts/);
    assert.equal(h.fake.requests.length - before, 4);
  });

  it('does not retry a 400', async () => {
    h.fake.enqueue({ status: 400 });
    const before = h.fake.requests.length;
    const err = await rejection(llm().complete(ref, ask));
    assertLlmError(err);
    assert.equal(err.status, 400);
    assert.equal(h.fake.requests.length - before, 1);
  });

  it('streams with retry before the first event, but never retries once content was emitted', async () => {
    h.fake.enqueue({ status: 503, retryAfter: 0 }, { text: 'abcdefgh', chunkSize: 2 });
    const events = await collect(llm().stream(ref, ask));
    assert.deepEqual(
      events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])),
      ['ab', 'cd', 'ef', 'gh'],
    );

    h.fake.enqueue({ text: 'abcdefgh', chunkSize: 2, cutAfterChunks: 2 }, { text: 'must not be asked for' });
    const before = h.fake.requests.length;
    const seen: StreamEvent[] = [];
    const err = await rejection(
      (async () => {
        for await (const e of llm().stream(ref, ask)) seen.push(e);
      })(),
    );
    assertLlmError(err);
    assert.deepEqual(
      seen.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])),
      ['ab', 'cd'],
    );
    assert.equal(h.fake.requests.length - before, 1);
    assert.equal(h.fake.pending, 1);
    await llm().complete(ref, ask); // consumes the left-over scripted reply
  });

  it('hands over to the fallback chain when the primary keeps failing', async () => {
    await setConfig(h.kernel, 'fallback_providers', [{ provider: 'anthropic', model: 'claude-backup', base_url: backup.url, api_key_env: LLM_TEST_KEY_ENV }]);
    try {
      h.fake.enqueue(...Array.from({ length: 4 }, () => ({ status: 500 })));
      backup.enqueue({ text: 'from the backup' });
      const result = await llm().complete(ref, ask);
      assert.deepEqual(result.content, [{ type: 'text', text: 'from the backup' }]);
      assert.equal(result.provider, 'anthropic');
      assert.equal(backup.requests.at(-1)!.path, '/v1/messages');
      assert.equal(backup.requests.at(-1)!.body.model, 'claude-backup');

      // Streaming too; and when every slot fails, the error names each one.
      h.fake.enqueue(...Array.from({ length: 4 }, () => ({ status: 502 })));
      backup.enqueue({ text: 'streamed backup' });
      const events = await collect(llm().stream(ref, ask));
      assert.equal((events.at(-1) as Extract<StreamEvent, { type: 'done' }>).result.provider, 'anthropic');

      h.fake.enqueue(...Array.from({ length: 4 }, () => ({ status: 500 })));
      backup.enqueue({ status: 401 });
      const err = await rejection(llm().complete(ref, ask));
      assertLlmError(err);
      assert.match(err.message, /all 2 providers of the fallback chain failed: openai\/gpt-4o-mini: .*500.*; anthropic\/claude-backup: .*401/);
    } finally {
      await setConfig(h.kernel, 'fallback_providers', []);
    }
  });

  it('falls back when the primary has no API key (provider key removed)', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    await setConfig(h.kernel, 'fallback_providers', [
      { provider: 'openai', model: 'gpt-4o-mini', base_url: `${backup.url}/v1`, api_key_env: LLM_TEST_KEY_ENV },
    ]);
    try {
      backup.enqueue({ text: 'openai backup' });
      const result = await llm().complete({ provider: 'anthropic', model: 'claude-x' }, ask);
      assert.deepEqual(result.content, [{ type: 'text', text: 'openai backup' }]);
    } finally {
      await setConfig(h.kernel, 'fallback_providers', []);
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('abort cancels the in-flight provider request and rejects promptly with an AbortError', async () => {
    h.fake.enqueue({ text: 'too late', delayMs: 3000 });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 150);
    const err = await rejection(llm().complete(ref, { ...ask, signal: controller.signal }));
    assert.equal(err.name, 'AbortError');
    assert.ok(Date.now() - started < 1000);
    await waitFor(() => h.fake.requests.at(-1)!.aborted, 2000);

    // A stream aborted after its first delta ends with what was said and an estimated usage (a stopped reply is metered).
    h.fake.enqueue({ text: 'x'.repeat(40), chunkSize: 1, chunkDelayMs: 10 });
    const streamCtl = new AbortController();
    const seen: StreamEvent[] = [];
    for await (const e of llm().stream(ref, { ...ask, signal: streamCtl.signal })) {
      seen.push(e);
      streamCtl.abort();
    }
    assert.deepEqual(
      seen.map((e) => e.type),
      ['text_delta', 'stopped'],
    );
    const stopped = seen[1] as Extract<StreamEvent, { type: 'stopped' }>;
    assert.deepEqual(stopped.result.content, [{ type: 'text', text: 'x' }]);
    assert.equal(stopped.result.stopReason, 'stopped');
    assert.equal(stopped.result.usage.outputTokens, 1);
    assert.ok(stopped.result.usage.inputTokens > 0);
    await waitFor(() => h.fake.requests.at(-1)!.aborted, 2000);

    // A stream aborted before any content still rejects with the AbortError.
    h.fake.enqueue({ text: 'too late', delayMs: 3000 });
    const earlyCtl = new AbortController();
    setTimeout(() => earlyCtl.abort(), 100);
    const streamErr = await rejection(
      (async () => {
        for await (const e of llm().stream(ref, { ...ask, signal: earlyCtl.signal })) void e;
      })(),
    );
    assert.equal(streamErr.name, 'AbortError');
    await waitFor(() => h.fake.requests.at(-1)!.aborted, 2000);

    // Abort while waiting out a Retry-After.
    h.fake.enqueue({ status: 429, retryAfter: 30 }, { text: 'never' });
    const waitCtl = new AbortController();
    setTimeout(() => waitCtl.abort(), 200);
    const t0 = Date.now();
    const waitErr = await rejection(llm().complete(ref, { ...ask, signal: waitCtl.signal }));
    assert.equal(waitErr.name, 'AbortError');
    assert.ok(Date.now() - t0 < 1000);
    h.fake.requests.length = 0;
    await llm().complete(ref, ask); // takes the left-over 'never'
  });

  it('leaving a stream early closes the provider connection', async () => {
    h.fake.enqueue({ text: 'y'.repeat(100), chunkSize: 1, chunkDelayMs: 10 });
    for await (const e of llm().stream(ref, ask)) {
      if (e.type === 'text_delta') break;
    }
    await waitFor(() => h.fake.requests.at(-1)!.aborted, 2000);
  });

  it('bounds a request that never answers with request_timeout_secs', async () => {
    await setConfig(h.kernel, 'llm.request_timeout_secs', 0.2);
    await setConfig(h.kernel, 'llm.max_retries', 0);
    try {
      h.fake.enqueue({ text: 'slow', delayMs: 2000 });
      const err = await rejection(llm().complete(ref, ask));
      assertLlmError(err);
      assert.match(err.message, /did not answer within 0.2 s/);

      // For streams the bound is per event: a stall after content ends the stream with that error, without a retry.
      await setConfig(h.kernel, 'llm.max_retries', 3);
      h.fake.enqueue({ text: 'abcd', chunkSize: 2, chunkDelayMs: 600 }, { text: 'not asked' });
      const before = h.fake.requests.length;
      const seen: string[] = [];
      const streamErr = await rejection(
        (async () => {
          for await (const e of llm().stream(ref, ask)) if (e.type === 'text_delta') seen.push(e.text);
        })(),
      );
      assertLlmError(streamErr);
      assert.match(streamErr.message, /did not answer within 0.2 s/);
      assert.deepEqual(seen, ['ab']);
      assert.equal(h.fake.requests.length - before, 1);
      await llm().complete(ref, ask); // takes the left-over 'not asked'
    } finally {
      await setConfig(h.kernel, 'llm.request_timeout_secs', 5);
      await setConfig(h.kernel, 'llm.max_retries', 3);
    }
  });

  it('a beforeCall refusal prevents any provider request', async () => {
    h.refuse = { status: 402, error: 'daily budget exceeded' };
    const before = h.fake.requests.length;
    const err = await rejection(llm().complete(ref, { messages: [user('x'.repeat(400))], meta: { agentId: 'a1' } }));
    assertRefusal(err);
    assert.equal(err.status, 402);
    assert.equal(err.message, 'daily budget exceeded');
    const streamErr = await rejection(collect(llm().stream(ref, ask)));
    assertRefusal(streamErr);
    assert.equal(h.fake.requests.length, before);
    const check = h.checks.at(-2)!;
    assert.equal(check.provider, 'openai');
    assert.equal(check.meta.agentId, 'a1');
    assert.ok(check.estimatedInputTokens >= 100);
  });

  it('lists the formats of the loaded drivers and the configured default model', () => {
    const service = llm();
    assert.deepEqual(service.formats().sort(), ['anthropic', 'openai']);
    const { provider, model, api_key_env } = service.defaultModel();
    assert.deepEqual({ provider, model, api_key_env }, { provider: 'openai', model: 'gpt-4o-mini', api_key_env: 'TALON_LLM_TEST_KEY' });
    assert.match(service.defaultModel().base_url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('says which driver module is missing for a format', async () => {
    const err = await rejection(llm().complete({ provider: 'ollama', model: 'llama3' }, ask));
    assertLlmError(err);
    assert.equal(err.status, 501);
    assert.match(
      err.message,
      /no driver for API format 'ollama' \(provider 'ollama'\).*llm-ollama.*formats with a driver: (openai, anthropic|anthropic, openai)/,
    );
  });
});

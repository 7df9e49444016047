import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { collect, startTestKernel, userMessage, type TestKernel } from '@talon/testing';
import { llmService, type LlmError, type LlmService } from '@talon/llm';

/** A wire format is a name a driver module registers: neither the llm module nor the catalog lists them. */
describe('API formats are registered names', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'llm-formats-'));
  let k: TestKernel;
  const llm = () => k.kernel.services.view<LlmService>(llmService.id);
  const provider = (id: string, format: string) =>
    writeFileSync(
      path.join(home, 'providers', `${id}.toml`),
      `[provider]\nid = "${id}"\ndisplay_name = "${id}"\napi_format = "${format}"\nbase_url = "http://127.0.0.1:1"\nkey_required = false\n`,
    );

  before(async () => {
    mkdirSync(path.join(home, 'providers'));
    provider('echoer', 'echo');
    provider('soapy', 'soap');
    const fixtures = path.join(import.meta.dirname, 'fixtures');
    k = await startTestKernel({ only: ['llm', 'echo-driver'], home, config: `module_paths = ["${fixtures}"]\n` });
  });
  after(async () => {
    await k?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('a driver module registers a new format, and providers of that format are called through it', async () => {
    assert.deepEqual(llm().formats(), ['echo']);
    const result = await llm().complete({ provider: 'echoer', model: 'm1' }, { messages: [userMessage('Hi')] });
    assert.deepEqual(result.content, [{ type: 'text', text: 'echo #1: Hi' }]);
    // The driver of an endpoint is made once and kept (it holds the SDK client).
    const events = await collect(llm().stream({ provider: 'echoer', model: 'm1' }, { messages: [userMessage('Yo')] }));
    assert.deepEqual(events[0], { type: 'text_delta', text: 'echo #1: Yo' });
  });

  it("the driver's errors made with the kit are LlmErrors the service understands (not retried: 400)", async () => {
    const err = (await llm()
      .complete({ provider: 'echoer', model: 'm1' }, { messages: [] })
      .then(() => assert.fail('expected a rejection'))
      .catch((e: unknown) => e)) as LlmError;
    assert.equal(err.name, 'LlmError');
    assert.equal(err.status, 400);
    assert.equal(err.retryable, false);
    assert.equal(err.message, 'nothing to echo');
  });

  it('a provider whose format no module registers fails at call time, naming the format', async () => {
    const err = (await llm()
      .complete({ provider: 'soapy', model: 'm1' }, { messages: [userMessage('Hi')] })
      .then(() => assert.fail('expected a rejection'))
      .catch((e: unknown) => e)) as LlmError;
    assert.equal(err.name, 'LlmError');
    assert.equal(err.status, 501);
    assert.match(err.message, /no driver for API format 'soap' \(provider 'soapy'\).*formats with a driver: echo/);
  });
});

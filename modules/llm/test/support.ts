/** Boots a kernel with the llm module, some drivers and a fake provider, for the llm and driver tests. */
import { startTestKernel, type TestKernel } from '@talon/module-sdk/testing';
import { FakeProvider } from '@talon/module-sdk/testing';
import { llmHooks, llmService, type CallCheck, type CallRecord, type LlmService } from '../api.ts';

export const TEST_KEY_ENV = 'TALON_LLM_TEST_KEY';

export interface LlmHarness {
  kernel: TestKernel;
  fake: FakeProvider;
  llm: LlmService;
  /** Every afterCall record, in order. */
  calls: CallRecord[];
  checks: CallCheck[];
  /** Set to refuse calls in beforeCall. */
  refuse?: { status: number; error: string };
  stop(): Promise<void>;
}

/** config is appended to a config.toml with fast retries ([llm] retry_base_ms = 5). */
export async function startLlmHarness(only: string[], config: (fakeUrl: string) => string): Promise<LlmHarness> {
  process.env[TEST_KEY_ENV] = 'sk-test-key';
  const fake = new FakeProvider();
  await fake.start();
  const kernel = await startTestKernel({ only, config: `${config(fake.url)}\n[llm]\nretry_base_ms = 5\nretry_max_ms = 20\nrequest_timeout_secs = 5\n` });
  const harness: LlmHarness = {
    kernel,
    fake,
    llm: kernel.kernel.services.view<LlmService>(llmService.id),
    calls: [],
    checks: [],
    async stop() {
      await kernel.stop();
      await fake.stop();
    },
  };
  const hooks = kernel.kernel.hooks.catalogue(llmHooks.id) as ReturnType<(typeof llmHooks)['create']>;
  hooks.beforeCall.tapPromise('test', async (check) => {
    harness.checks.push(check);
    return harness.refuse;
  });
  hooks.afterCall.tapPromise('test', async (record) => {
    harness.calls.push(record);
  });
  return harness;
}

export const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** The tool every driver test round-trips. */
export const weather = {
  name: 'get_weather',
  description: 'Weather of a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

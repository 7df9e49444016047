/**
 * A test kernel with the llm module, some driver modules and a scripted fake provider. The types
 * restate the parts of @talon/llm the harness and the driver-conformance suite use, so that the
 * SDK does not depend on the llm module (@talon/llm's own types fit them).
 */
import { FakeProvider } from './fake-provider.ts';
import { startTestKernel, type TestKernel } from './kernel.ts';

/** The environment variable the harness fills with a test key ('sk-test-key'). */
export const LLM_TEST_KEY_ENV = 'TALON_LLM_TEST_KEY';

export interface TestModelRef {
  provider: string;
  model: string;
  baseUrl?: string;
  apiKeyEnv?: string;
}

export type TestBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; mediaType: string; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; toolUseId: string; content: string; isError?: boolean };

export interface TestMessage {
  role: 'user' | 'assistant';
  content: TestBlock[];
}

export interface TestRequest {
  system?: string;
  messages: TestMessage[];
  tools?: Array<{ name: string; description: string; inputSchema: Readonly<Record<string, unknown>> }>;
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
  meta?: { agentId?: string; sessionId?: string; purpose?: string };
}

export interface TestResult {
  content: TestBlock[];
  stopReason: string;
  usage: { inputTokens: number; outputTokens: number };
  provider: string;
  model: string;
}

export type TestStreamEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_use_start'; id: string; name: string }
  | { type: 'tool_use_end'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'done'; result: TestResult }
  /** The caller aborted after content went out: what streamed so far. */
  | { type: 'stopped'; result: TestResult };

/** The calls of the llm service (`llm.service`) the tests make. */
export interface TestLlm {
  complete(ref: TestModelRef, request: TestRequest): Promise<TestResult>;
  stream(ref: TestModelRef, request: TestRequest): AsyncIterable<TestStreamEvent>;
}

/** What the llm module's afterCall hook reports. */
export interface TestCallRecord {
  provider: string;
  model: string;
  usage: { inputTokens: number; outputTokens: number };
  meta: { agentId?: string; sessionId?: string; purpose?: string };
  latencyMs: number;
  ok: boolean;
  error?: string;
}

/** What the llm module's beforeCall hook is asked. */
export interface TestCallCheck {
  provider: string;
  model: string;
  meta: { agentId?: string; sessionId?: string; purpose?: string };
  estimatedInputTokens: number;
}

export interface LlmHarness {
  kernel: TestKernel;
  fake: FakeProvider;
  llm: TestLlm;
  /** Every afterCall record, in order. */
  calls: TestCallRecord[];
  /** Every beforeCall check, in order. */
  checks: TestCallCheck[];
  /** Set to refuse calls in beforeCall. */
  refuse?: { status: number; error: string };
  /** A live view of a service of the kernel by id (typed by the caller: `h.service<LlmService>(llmService.id)`). */
  service<T extends object>(id: string): T;
  stop(): Promise<void>;
}

interface CallHooks {
  beforeCall: { tapPromise(name: string, fn: (check: TestCallCheck) => Promise<{ status: number; error: string } | undefined>): void };
  afterCall: { tapPromise(name: string, fn: (record: TestCallRecord) => Promise<void>): void };
}

/**
 * Boots the modules in `only` (the llm module and its dependencies come along with a driver) with
 * `config(fakeUrl)` in config.toml, followed by fast retries: [llm] retry_base_ms = 5,
 * retry_max_ms = 20, request_timeout_secs = 5.
 */
export async function startLlmHarness(only: string[], config: (fakeUrl: string) => string): Promise<LlmHarness> {
  process.env[LLM_TEST_KEY_ENV] = 'sk-test-key';
  const fake = new FakeProvider();
  await fake.start();
  let kernel: TestKernel;
  try {
    kernel = await startTestKernel({ only, config: `${config(fake.url)}\n[llm]\nretry_base_ms = 5\nretry_max_ms = 20\nrequest_timeout_secs = 5\n` });
  } catch (err) {
    await fake.stop();
    throw err;
  }
  const service = <T extends object>(id: string) => kernel.kernel.services.view<T>(id);
  const harness: LlmHarness = {
    kernel,
    fake,
    llm: service<TestLlm>('llm.service'),
    calls: [],
    checks: [],
    service,
    async stop() {
      await kernel.stop();
      await fake.stop();
    },
  };
  const hooks = kernel.kernel.hooks.catalogue('llm.hooks')?.hooks as CallHooks | undefined;
  if (!hooks) throw new Error('the llm module is not loaded: add a driver module (or llm) to `only`');
  hooks.beforeCall.tapPromise('test', async (check) => {
    harness.checks.push(check);
    return harness.refuse;
  });
  hooks.afterCall.tapPromise('test', async (record) => {
    harness.calls.push(record);
  });
  return harness;
}

export const userMessage = (text: string): TestMessage => ({ role: 'user', content: [{ type: 'text', text }] });

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** The tool the driver tests round-trip. */
export const weatherTool = {
  name: 'get_weather',
  description: 'Weather of a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

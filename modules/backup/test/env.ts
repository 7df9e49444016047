/** A kernel with agents, memory, audit and backup, its default model on a FakeProvider. */
import { FakeProvider, startTestKernel, type TestKernel } from '@talon/testing';

export const KEY = 'backup-test-key-0123456789';
export const auth = { authorization: `Bearer ${KEY}` };

export function configFor(fake: FakeProvider, extra = ''): string {
  return [
    `api_key = "${KEY}"`,
    '[default_model]',
    'provider = "openai"',
    'model = "fake-model"',
    `base_url = "${fake.url}/v1"`,
    'api_key_env = "BACKUP_FAKE_KEY"',
    '[llm]',
    'max_retries = 0',
    extra,
  ].join('\n');
}

export const MODULES = ['backup', 'audit', 'auth', 'agents', 'memory', 'llm-openai', 'error-envelope'];

export async function start(fake: FakeProvider, options: { home?: string; extra?: string; modules?: string[] } = {}): Promise<TestKernel> {
  process.env.BACKUP_FAKE_KEY = 'sk-test-fake-key';
  const only = [...MODULES, ...(options.modules ?? [])];
  return startTestKernel({ only, config: configFor(fake, options.extra), home: options.home, keepHome: Boolean(options.home) });
}

export async function call<T = unknown>(k: TestKernel, path: string, init: { method?: string; json?: unknown } = {}): Promise<{ status: number; body: T }> {
  const res = await k.request(path, { method: init.method ?? 'GET', headers: auth, json: init.json });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

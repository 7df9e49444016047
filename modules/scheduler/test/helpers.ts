/** A kernel with agents, the queue, the scheduler (and optional extras) and an OpenAI-format fake provider. */
import path from 'node:path';
import type { AnyEvent } from '@talon/module-sdk';
import { FakeProvider, startTestKernel, type TestKernel } from '@talon/testing';

export interface Env {
  fake: FakeProvider;
  k: TestKernel;
  events: AnyEvent[];
}

const FIXTURES = path.join(import.meta.dirname, 'fixtures');

export function kernelConfig(fake: FakeProvider, extra = ''): string {
  process.env.SCHEDULER_FAKE_KEY = 'sk-test';
  return [
    `module_paths = [${JSON.stringify(FIXTURES)}]`,
    '[default_model]',
    'provider = "openai"',
    'model = "fake-model"',
    `base_url = "${fake.url}/v1"`,
    'api_key_env = "SCHEDULER_FAKE_KEY"',
    '[llm]',
    'max_retries = 0',
    extra,
  ].join('\n');
}

export async function startKernel(
  fake: FakeProvider,
  options: { config?: string; modules?: string[]; home?: string } = {},
): Promise<{ k: TestKernel; events: AnyEvent[] }> {
  const k = await startTestKernel({
    only: ['scheduler', 'llm-openai', 'error-envelope', ...(options.modules ?? [])],
    config: kernelConfig(fake, options.config),
    home: options.home,
  });
  const scope = k.kernel.events.scope('test');
  const events: AnyEvent[] = [];
  scope.subscribe('*', (e: AnyEvent) => void events.push(e));
  scope.commit();
  return { k, events };
}

export async function startEnv(config = '', modules: string[] = []): Promise<Env> {
  const fake = new FakeProvider();
  await fake.start();
  const { k, events } = await startKernel(fake, { config, modules });
  return { fake, k, events };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
  await env?.fake.stop();
}

export async function spawn(k: TestKernel, name: string): Promise<string> {
  const manifest = `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n`;
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
  if (res.status !== 201) throw new Error(`spawn failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { agent_id: string }).agent_id;
}

export async function call<T = Record<string, unknown>>(
  k: TestKernel,
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; body: T }> {
  const res = await k.request(path, init);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

export type Job = Record<string, unknown> & { id: string; next_run: string | null; enabled: boolean; run_count: number };

export async function createJob(k: TestKernel, body: Record<string, unknown>): Promise<Job> {
  const res = await call<Job & { error?: string }>(k, '/api/schedules', { method: 'POST', json: body });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.body.error}`);
  return res.body;
}

export async function job(k: TestKernel, id: string): Promise<Job> {
  return (await call<Job>(k, `/api/schedules/${id}`)).body;
}

/** Shared test setup: a kernel with agents, auth and a2a, its default model on the scripted fake provider. */
import { FakeProvider, startTestKernel, type TestKernel } from '@talon/testing';

export interface Env {
  fake: FakeProvider;
  k: TestKernel;
}

export async function startEnv(config = '', modules: string[] = [], home: { home?: string; keepHome?: boolean } = {}): Promise<Env> {
  process.env.FAKE_KEY = 'sk-test-fake-key';
  const fake = new FakeProvider();
  await fake.start();
  // The caller's lines come first, so top-level keys (api_key) stay top-level.
  const toml = [
    config,
    '[default_model]',
    'provider = "openai"',
    'model = "fake-model"',
    `base_url = "${fake.url}/v1"`,
    'api_key_env = "FAKE_KEY"',
    '[llm]',
    'max_retries = 0',
  ].join('\n');
  const k = await startTestKernel({ only: ['agents', 'llm-openai', 'auth', 'error-envelope', 'a2a', ...modules], config: toml, ...home });
  return { fake, k };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
  await env?.fake.stop();
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export async function spawnAgent(k: TestKernel, name: string, tools = '[]', headers: Record<string, string> = {}): Promise<string> {
  const manifest = [
    `name = "${name}"`,
    `description = "The ${name} agent"`,
    '[model]',
    'provider = "default"',
    'model = "default"',
    '[capabilities]',
    `tools = ${tools}`,
  ].join('\n');
  const res = await k.request('/api/agents', { method: 'POST', headers, json: { manifest_toml: manifest } });
  if (res.status !== 201) throw new Error(`spawn failed: ${res.status} ${await res.text()}`);
  return (await json<{ agent_id: string }>(res)).agent_id;
}

export interface TaskView {
  task_id: string;
  status: string;
  result: { role: string; parts: Array<{ text: string }> } | null;
  agent_id: string | null;
  remote_task_id?: string | null;
}

/** Shared test setup: a kernel with agents, auth and a2a, its default model on the scripted fake provider. */
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';

export interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
}

export async function startEnv(config = '', modules: string[] = [], home: { home?: string; keepHome?: boolean } = {}): Promise<Env> {
  const k = await startAgentTestKernel({ only: ['agents', 'auth', 'error-envelope', 'a2a', ...modules], config, ...home });
  return { fake: k.fake, k };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
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

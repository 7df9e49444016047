/** A kernel with agents, an OpenAI-format fake provider and the tasks module. */
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';

export interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
}

export async function startEnv(config = ''): Promise<Env> {
  const k = await startAgentTestKernel({ only: ['tasks', 'error-envelope'], config });
  return { fake: k.fake, k };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
}

export async function spawn(k: TestKernel, name: string): Promise<string> {
  const manifest = `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n[capabilities]\ntools = ["*"]\n`;
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

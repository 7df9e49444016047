/** A kernel with agents, the built-in tools and approvals, its default model on a scripted provider. */
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';
import { generate } from 'otplib';

export interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
}

export const MODULES = ['agents', 'llm-openai', 'tools', 'approvals', 'catalog', 'error-envelope'];

export async function startEnv(approvalConfig: string, more: string[] = []): Promise<Env> {
  const k = await startAgentTestKernel({ only: [...MODULES, ...more], config: `[approval]\n${approvalConfig}` });
  return { fake: k.fake, k };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`not JSON (${res.status}): ${text.slice(0, 200)}`);
  }
}

export async function spawn(k: TestKernel, name: string, tools = ['file_write', 'file_read']): Promise<string> {
  const manifest_toml = `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n[capabilities]\ntools = ${JSON.stringify(tools)}\n`;
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml } });
  if (res.status !== 201) throw new Error(`spawn failed: ${res.status} ${await res.text()}`);
  return (await json<{ agent_id: string }>(res)).agent_id;
}

/** The TOTP code of a base32 secret, `steps` time steps from now. */
export const code = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

/** Everything the provider was sent, as text (tool results and injected messages included). */
export const sent = (fake: FakeProvider) => fake.requests.map((r) => JSON.stringify(r.body)).join('\n');

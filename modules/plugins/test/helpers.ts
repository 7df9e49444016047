/** A kernel with plugins, agents, tools, the hub and signing; an OpenAI-format fake provider; plugin folders on disk. */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';

export interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
  home: string;
}

export const MODULES = ['plugins', 'agents', 'tools', 'hub', 'prompt-guard', 'manifest-signing', 'llm-openai', 'error-envelope'];

export interface EnvOptions {
  stack?: string[];
  extra?: string;
  modules?: string[];
  /** Plugin folders written under $TALON_HOME/plugins before the start: name → files. */
  plugins?: Record<string, Record<string, string>>;
}

export async function startEnv(options: EnvOptions = {}): Promise<Env> {
  const home = mkdtempSync(path.join(tmpdir(), 'plugins-test-'));
  for (const [name, files] of Object.entries(options.plugins ?? {})) writePlugin(path.join(home, 'plugins'), name, files);
  const config = [`context_engine = { plugin_stack = ${JSON.stringify(options.stack ?? [])} }`, '[skills]', 'watch = false', options.extra ?? ''].join('\n');
  const k = await startAgentTestKernel({ only: options.modules ?? MODULES, config, home });
  return { fake: k.fake, k, home };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
  if (env) rmSync(env.home, { recursive: true, force: true });
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** plugin.toml text: hooks by name → file, plus [hooks] settings and any other TOML. */
export function pluginToml(name: string, hooks: Record<string, string>, settings = '', extra = ''): string {
  const lines = Object.entries(hooks).map(([h, f]) => `${h} = "${f}"`);
  return `name = "${name}"\nversion = "1.0.0"\ndescription = "Test plugin ${name}"\nauthor = "tests"\n${extra}\n[hooks]\n${lines.join('\n')}\n${settings}\n`;
}

/** Writes a plugin folder (hook files executable) under root; returns its path. */
export function writePlugin(root: string, name: string, files: Record<string, string>): string {
  const dir = path.join(root, name);
  for (const [rel, text] of Object.entries(files)) {
    const full = path.join(dir, rel);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, text);
    if (rel.startsWith('hooks/')) chmodSync(full, 0o755);
  }
  return dir;
}

export async function spawnAgent(k: TestKernel, name: string, extra = '', tools: string[] = [], capabilities = ''): Promise<string> {
  const manifest = `name = "${name}"\n${extra}\n[model]\nprovider = "default"\nmodel = "default"\nsystem_prompt = "You are ${name}."\n[capabilities]\ntools = ${JSON.stringify(tools)}\n${capabilities}\n`;
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
  if (res.status !== 201) throw new Error(`spawn failed: ${res.status} ${await res.text()}`);
  return (await json<{ agent_id: string }>(res)).agent_id;
}

/** Sends a message; answers the HTTP status and the system prompt the model was sent (the last request's). */
export async function turn(env: Env, agentId: string, message: string): Promise<{ status: number; system: string; body: Record<string, unknown> }> {
  const before = env.fake.requests.length;
  const res = await env.k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message } });
  const body = await json(res);
  const sent = env.fake.requests.slice(before).at(-1)?.body as { messages?: Array<{ role: string; content: unknown }> } | undefined;
  const system = sent?.messages?.find((m) => m.role === 'system' || m.role === 'developer')?.content;
  return { status: res.status, system: typeof system === 'string' ? system : JSON.stringify(system ?? ''), body };
}

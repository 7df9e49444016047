/** Shared test setup: a kernel with agents, tools, auth and mcp, its default model on the scripted fake provider. */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAgentTestKernel, waitFor, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const STDIO_SERVER = path.join(FIXTURES, 'stdio-server.mjs');
// A devDependency of this module: resolved from its folder (npm may install it there or at the root).
export const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

export interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
}

export async function startEnv(config = '', modules: string[] = [], home: { home?: string; keepHome?: boolean } = {}): Promise<Env> {
  const k = await startAgentTestKernel({ only: ['agents', 'tools', 'auth', 'error-envelope', 'mcp', ...modules], config, ...home });
  return { fake: k.fake, k };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export function manifest(name: string, extra = '', tools = '[]'): string {
  return [
    `name = "${name}"`,
    `description = "The ${name} agent"`,
    extra,
    '[model]',
    'provider = "default"',
    'model = "default"',
    '[capabilities]',
    `tools = ${tools}`,
  ].join('\n');
}

export async function spawnAgent(k: TestKernel, name: string, extra = '', tools = '[]', headers: Record<string, string> = {}): Promise<string> {
  const res = await k.request('/api/agents', { method: 'POST', headers, json: { manifest_toml: manifest(name, extra, tools) } });
  if (res.status !== 201) throw new Error(`spawn failed: ${res.status} ${await res.text()}`);
  return (await json<{ agent_id: string }>(res)).agent_id;
}

export interface ServerView {
  id: string;
  name: string;
  status: string;
  connected: boolean;
  tools: Array<{ name: string; description: string; agent_tool: string }>;
  last_error: string | null;
  env: string[];
  command: string | null;
  args: string[];
  template_id: string | null;
}

/** Adds the fixture stdio server and waits until it is connected. */
export async function addFixture(k: TestKernel, name = 'fixture', env: Record<string, string> = {}): Promise<ServerView> {
  const res = await k.request('/api/mcp/servers', {
    method: 'POST',
    json: { name, transport: { type: 'stdio', command: process.execPath, args: [STDIO_SERVER] }, env },
  });
  if (res.status !== 201) throw new Error(`add failed: ${res.status} ${await res.text()}`);
  return waitConnected(k, name);
}

export async function server(k: TestKernel, idOrName: string): Promise<ServerView> {
  return json<ServerView>(await k.request(`/api/mcp/servers/${idOrName}`));
}

export async function waitConnected(k: TestKernel, idOrName: string, timeoutMs = 15000): Promise<ServerView> {
  const view = await waitFor(
    async () => {
      const current = await server(k, idOrName);
      return current.connected ? current : undefined;
    },
    timeoutMs,
    `server '${idOrName}' to connect`,
  );
  return view!;
}

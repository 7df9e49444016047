/** A kernel with agents, the queue, workflows and an OpenAI-format fake provider. */
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type RecordedRequest, type ScriptedReply, type TestKernel } from '@talon/testing';

export interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
}

export const FAKE_KEY_ENV = 'WORKFLOWS_FAKE_KEY';

/** The default model for a kernel run as a child process (crash.test.ts), where the testing kit's kernel is not used. */
export function modelConfig(fake: FakeProvider): string {
  return [
    '[default_model]',
    'provider = "openai"',
    'model = "fake-model"',
    `base_url = "${fake.url}/v1"`,
    `api_key_env = "${FAKE_KEY_ENV}"`,
    '[llm]',
    'max_retries = 0',
  ].join('\n');
}

export async function startEnv(config = ''): Promise<Env> {
  const k = await startAgentTestKernel({ only: ['workflows', 'error-envelope'], config });
  return { fake: k.fake, k };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
}

export const manifest = (name: string) => `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n`;

export async function spawn(base: { request: TestKernel['request'] }, name: string): Promise<string> {
  const res = await base.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest(name) } });
  if (res.status !== 201) throw new Error(`spawn failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { agent_id: string }).agent_id;
}

export async function call<T = Record<string, unknown>>(
  base: { request: TestKernel['request'] },
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; body: T }> {
  const res = await base.request(path, init);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

export async function createWorkflow(k: { request: TestKernel['request'] }, body: Record<string, unknown>): Promise<string> {
  const res = await call<{ workflow_id: string; error?: string }>(k, '/api/workflows', { method: 'POST', json: body });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.body.error}`);
  return res.body.workflow_id;
}

/** The text of the last user message of each provider request, in order. */
export function prompts(fake: FakeProvider): string[] {
  return fake.requests.filter((r) => Array.isArray(r.body.messages)).map(promptOf);
}

function promptOf(r: RecordedRequest): string {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content);
}

/**
 * Answers provider requests by their prompt (the first key the last user message starts with), whatever order they
 * arrive in: steps that start together reach the provider in an order the engine decides (on PostgreSQL a turn's
 * reads before its call are round trips). A request matching no key gets the queue or the fallback, as before. The
 * reply is queued as the fake records the request, just before it takes the next reply; set() replaces the script.
 */
export function replyByPrompt(fake: FakeProvider): { set(replies: Record<string, ScriptedReply>): void } {
  let script: Record<string, ScriptedReply> = {};
  const requests = fake.requests;
  const push = requests.push.bind(requests);
  requests.push = (...records: RecordedRequest[]) => {
    for (const r of records) {
      const prompt = Array.isArray(r.body.messages) ? promptOf(r) : '';
      const key = Object.keys(script).find((k) => prompt.startsWith(k));
      if (key && !fake.pending) fake.enqueue(script[key]);
    }
    return push(...records);
  };
  return { set: (replies) => void (script = replies) };
}

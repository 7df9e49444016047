/** A kernel with agents, the queue, the scheduler (and optional extras) and an OpenAI-format fake provider. */
import path from 'node:path';
import type { EventOf, TalonEvent } from '@talon/module-sdk';
import type { agentEvents } from '@talon/agents';
import type { scheduleEvents } from '@talon/scheduler';

/** What the tests read of the recorded events (a name says whose payload it is). */
type Recorded = EventOf<typeof scheduleEvents> | EventOf<typeof agentEvents>;
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';

export interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
  events: Recorded[];
}

const FIXTURES = path.join(import.meta.dirname, 'fixtures');

/** A kernel on a provider that may outlive it (a restart on one home keeps one provider). */
export async function startKernel(
  fake: FakeProvider | undefined,
  options: { config?: string; modules?: string[]; home?: string } = {},
): Promise<{ k: AgentTestKernel; events: Recorded[] }> {
  const k = await startAgentTestKernel({
    fake,
    only: ['scheduler', 'error-envelope', ...(options.modules ?? [])],
    config: `module_paths = [${JSON.stringify(FIXTURES)}]\n${options.config ?? ''}`,
    home: options.home,
  });
  const scope = k.kernel.events.scope('test');
  const events: Recorded[] = [];
  scope.subscribe('*', (e: TalonEvent) => void events.push(e as Recorded));
  scope.commit();
  return { k, events };
}

export async function startEnv(config = '', modules: string[] = []): Promise<Env> {
  const { k, events } = await startKernel(undefined, { config, modules });
  return { fake: k.fake, k, events };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
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

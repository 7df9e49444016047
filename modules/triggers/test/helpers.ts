/** A kernel with agents, the queue, triggers (and optional extras) and an OpenAI-format fake provider. */
import path from 'node:path';
import type { KnownEvent } from '../services/known.ts';
import { startAgentTestKernel, waitFor, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';

export interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
  /** Publishes an event on the kernel's bus, as a module would. */
  publish<K extends KnownEvent['type']>(type: K, data: Extract<KnownEvent, { type: K }>['data']): void;
  events: KnownEvent[];
}

const FIXTURES = path.join(import.meta.dirname, 'fixtures');

export async function startEnv(config = '', modules: string[] = []): Promise<Env> {
  const k = await startAgentTestKernel({ only: ['triggers', 'error-envelope', ...modules], config: `module_paths = [${JSON.stringify(FIXTURES)}]\n${config}` });
  const scope = k.kernel.events.scope('test');
  const events: KnownEvent[] = [];
  scope.subscribe('*', (e) => void events.push(e as KnownEvent));
  scope.commit();
  return { fake: k.fake, k, events, publish: (type, data) => void scope.publish(type, data) };
}

/** Publishes an event on a kernel's bus, as a module of that process would. */
export function publishOn<K extends KnownEvent['type']>(k: TestKernel, type: K, data: Extract<KnownEvent, { type: K }>['data']): void {
  const scope = k.kernel.events.scope('test');
  scope.publish(type, data);
  scope.commit();
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
}

export async function spawn(k: TestKernel, name: string, extra = ''): Promise<string> {
  const manifest = `name = "${name}"\n${extra}\n[model]\nprovider = "default"\nmodel = "default"\n[capabilities]\ntools = ["*"]\n`;
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

export async function createTrigger(k: TestKernel, body: Record<string, unknown>): Promise<string> {
  const res = await call<{ trigger_id: string; error?: string }>(k, '/api/triggers', { method: 'POST', json: body });
  if (res.status !== 201) throw new Error(`trigger create failed: ${res.status} ${res.body.error}`);
  return res.body.trigger_id;
}

export interface DeliveryItem {
  id: string;
  source: string;
  source_id: string;
  status: string;
  channel: string | null;
  response: string | null;
  error: string | null;
  session_id: string | null;
  cause: string | null;
}

export async function deliveries(k: TestKernel, agentId: string): Promise<DeliveryItem[]> {
  return (await call<{ deliveries: DeliveryItem[] }>(k, `/api/agents/${agentId}/deliveries`)).body.deliveries;
}

/** Waits until the agent has at least n deliveries, newest first. */
export function deliveriesAtLeast(k: TestKernel, agentId: string, n: number, timeoutMs = 5000): Promise<DeliveryItem[]> {
  return waitFor(
    async () => {
      const items = await deliveries(k, agentId);
      return items.length >= n ? items : undefined;
    },
    timeoutMs,
    `${n} deliveries`,
  ) as Promise<DeliveryItem[]>;
}

/** The text of the last user message of each provider request, in order. */
export function prompts(fake: FakeProvider): string[] {
  return fake.requests
    .filter((r) => Array.isArray(r.body.messages))
    .map((r) => {
      const messages = r.body.messages as Array<{ role: string; content: unknown }>;
      const last = [...messages].reverse().find((m) => m.role === 'user');
      return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content);
    });
}

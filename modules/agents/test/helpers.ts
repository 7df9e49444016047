/** Shared test setup: a fake provider and a kernel whose default model points at it. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestKernel, type TestKernel } from '@talon/module-sdk/testing';
import { FakeProvider } from '@talon/module-sdk/testing';

export const HELLO_WORLD = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hello-world.toml'), 'utf8');
/** Test-only modules (echo-tools, hooks-probe), loaded through module_paths. */
export const FIXTURE_MODULES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

export interface Env {
  fake: FakeProvider;
  k: TestKernel;
}

export async function startEnv(
  options: { config?: string; home?: string; keepHome?: boolean; modules?: string[]; echo?: boolean; fake?: FakeProvider } = {},
): Promise<Env> {
  process.env.FAKE_KEY = 'sk-test-fake-key';
  const fake = options.fake ?? new FakeProvider();
  if (!options.fake) await fake.start();
  const config = [
    `module_paths = [${JSON.stringify(FIXTURE_MODULES)}]`,
    '[default_model]',
    'provider = "openai"',
    'model = "fake-model"',
    `base_url = "${fake.url}/v1"`,
    'api_key_env = "FAKE_KEY"',
    '[llm]',
    'max_retries = 0',
    options.config ?? '',
  ].join('\n');
  const only = ['agents', 'llm-openai', 'error-envelope', ...(options.echo ? ['echo-tools'] : []), ...(options.modules ?? [])];
  const k = await startTestKernel({ only, config, home: options.home, keepHome: options.keepHome });
  return { fake, k };
}

export async function stopEnv(env: Env | undefined, stopFake = true): Promise<void> {
  await env?.k.stop();
  if (stopFake) await env?.fake.stop();
}

export function manifest(name: string, extra = ''): string {
  return `name = "${name}"\ndescription = "test agent ${name}"\ntags = ["test"]\n\n[model]\nprovider = "default"\nmodel = "default"\nsystem_prompt = "You are ${name}."\n\n[capabilities]\ntools = ["*"]\n${extra}`;
}

export async function spawn(k: TestKernel, name: string, extra = ''): Promise<{ agent_id: string; name: string }> {
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest(name, extra) } });
  if (res.status !== 201) throw new Error(`spawn failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { agent_id: string; name: string };
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** Reads an SSE response to its end: [{event, data}]. */
export async function readSse(res: Response): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const text = await res.text();
  return parseSse(text);
}

export function parseSse(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];
  for (const block of text.split('\n\n')) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length) events.push({ event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
  }
  return events;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until fn returns truthy (or fails after timeoutMs). */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('waitFor timed out');
    await sleep(20);
  }
}

/** A kernel whose default model is the scripted fake provider, with helpers to spawn agents and read JSON answers. */
import { parse } from 'smol-toml';
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider } from '@talon/testing';

export interface Harness {
  kernel: AgentTestKernel;
  fake: FakeProvider;
  /** Spawns an agent on gpt-4o-mini (priced by the catalogue) with no tools; returns its id. */
  spawn(name: string, extra?: string): Promise<string>;
  json<T = Record<string, unknown>>(path: string, init?: RequestInit & { json?: unknown }): Promise<{ status: number; body: T }>;
  stop(): Promise<void>;
}

export async function startHarness(only: string[], config = ''): Promise<Harness> {
  const kernel = await startAgentTestKernel({ only, model: 'gpt-4o-mini', config });
  const json = async <T>(path: string, init?: RequestInit & { json?: unknown }) => {
    const res = await kernel.request(path, init);
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  return {
    kernel,
    fake: kernel.fake,
    json,
    spawn: (name, extra = '') => kernel.spawnAgent(name, parse(`[model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n\n[capabilities]\ntools = []\n${extra}`)),
    stop: () => kernel.stop(),
  };
}

/** A kernel whose default model is the scripted fake provider, with helpers to spawn agents and read JSON answers. */
import { FakeProvider, startTestKernel, type TestKernel } from '@talon/testing';

const KEY_ENV = 'TALON_FAKE_PROVIDER_KEY';

export interface Harness {
  kernel: TestKernel;
  fake: FakeProvider;
  /** Spawns an agent on gpt-4o-mini (priced by the catalogue) with no tools; returns its id. */
  spawn(name: string, extra?: string): Promise<string>;
  json<T = Record<string, unknown>>(path: string, init?: RequestInit & { json?: unknown }): Promise<{ status: number; body: T }>;
  stop(): Promise<void>;
}

export async function startHarness(only: string[], config = ''): Promise<Harness> {
  process.env[KEY_ENV] = 'sk-test';
  const fake = new FakeProvider();
  await fake.start();
  const kernel = await startTestKernel({
    only,
    config: `[default_model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\nbase_url = "${fake.url}/v1"\napi_key_env = "${KEY_ENV}"\n${config}\n[llm]\nmax_retries = 0\n`,
  });
  const json = async <T>(path: string, init?: RequestInit & { json?: unknown }) => {
    const res = await kernel.request(path, init);
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  return {
    kernel,
    fake,
    json,
    async spawn(name, extra = '') {
      const manifest = `name = "${name}"\n\n[model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n\n[capabilities]\ntools = []\n${extra}`;
      const res = await json<{ agent_id?: string; error?: string }>('/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
      if (res.status !== 201 || !res.body.agent_id) throw new Error(`spawn failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.agent_id;
    },
    async stop() {
      await kernel.stop();
      await fake.stop();
    },
  };
}

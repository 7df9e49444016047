/**
 * A test kernel whose default model is a scripted FakeProvider: the set-up of nearly every test of a module that runs
 * agent turns (start the provider, point [default_model] at it, no retries so a scripted error shows at once).
 */
import { parse, stringify } from 'smol-toml';
import { FakeProvider, type ScriptedReply } from './fake-provider.ts';
import { startTestKernel, type TestKernel, type TestKernelOptions } from './kernel.ts';

/** The environment variable the default model's key is read from (set to a fake key when unset). */
export const AGENT_TEST_KEY_ENV = 'TALON_TEST_FAKE_KEY';

type Table = Record<string, unknown>;

export interface AgentTestKernelOptions extends Omit<TestKernelOptions, 'config'> {
  /** Replies queued before the kernel starts. */
  script?: ScriptedReply[];
  /** More config.toml (a function is given the provider's URL). Its values win over the ones set here. */
  config?: string | ((providerUrl: string) => string);
  /** The wire format the default model speaks; its driver module is added to `only`. */
  provider?: 'openai' | 'anthropic';
  /** The default model's name ('fake-model' unless given; usage tests want one with a price). */
  model?: string;
  /** A provider shared by several kernels (two processes on one home); stop() leaves it running. */
  fake?: FakeProvider;
}

export interface AgentTestKernel extends TestKernel {
  /** The scripted provider: enqueue replies, read the recorded requests. */
  fake: FakeProvider;
  /** Spawns an agent on the default model; `manifest` adds to (and may override) name and [model]. Answers its id. */
  spawnAgent(name: string, manifest?: Table): Promise<string>;
  /** POST /api/agents/:id/message with the text, as a user would send it. */
  message(agentId: string, text: string): Promise<Response>;
}

const isTable = (value: unknown): value is Table => typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** `over` laid on `base`, table by table (arrays and values are replaced). */
function merge(base: Table, over: Table): Table {
  const out: Table = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = isTable(value) && isTable(out[key]) ? merge(out[key], value) : value;
  return out;
}

/** Starts the provider (unless given) and a test kernel using it as the default model. Call stop() in an after() hook. */
export async function startAgentTestKernel(options: AgentTestKernelOptions = {}): Promise<AgentTestKernel> {
  const { script = [], config = '', provider = 'openai', model = 'fake-model', fake: shared, only, ...rest } = options;
  const fake = shared ?? new FakeProvider();
  if (!shared) await fake.start();
  fake.enqueue(...script);
  process.env[AGENT_TEST_KEY_ENV] ??= 'sk-test-fake-key';
  const defaults: Table = {
    default_model: { provider, model, base_url: provider === 'openai' ? `${fake.url}/v1` : fake.url, api_key_env: AGENT_TEST_KEY_ENV },
    llm: { max_retries: 0 },
  };
  const given = parse(typeof config === 'function' ? config(fake.url) : config);
  const driver = `llm-${provider}`;
  let k: TestKernel;
  try {
    k = await startTestKernel({ ...rest, only: only && !only.includes(driver) ? [...only, driver] : only, config: stringify(merge(defaults, given)) });
  } catch (err) {
    if (!shared) await fake.stop();
    throw err;
  }
  return {
    ...k,
    fake,
    async spawnAgent(name, manifest = {}) {
      const manifest_toml = stringify(merge({ name, model: { provider: 'default', model: 'default' } }, manifest));
      const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml } });
      if (res.status !== 201) throw new Error(`spawn of ${name} failed: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { agent_id: string }).agent_id;
    },
    message: (agentId, text) => k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: text } }),
    async stop() {
      await k.stop();
      if (!shared) await fake.stop();
    },
  };
}

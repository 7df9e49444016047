import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LLM_TEST_KEY_ENV as TEST_KEY_ENV, startLlmHarness, type LlmHarness } from '@talon/testing';
import type { ProviderEntry } from '@talon/catalog';
import { llmService, type LlmService } from '@talon/llm';
import { resolveTarget, type ResolveDeps } from '../services/resolve.ts';

/** The precedence rules alone, against a two-provider catalogue. */
describe('resolveTarget precedence', () => {
  const providers: Record<string, ProviderEntry> = {
    openai: {
      name: 'openai',
      display_name: 'OpenAI',
      api_format: 'openai',
      base_url: 'https://api.openai.com/v1',
      env_var: 'OPENAI_API_KEY',
      key_required: true,
    },
    ollama: { name: 'ollama', display_name: 'Ollama', api_format: 'ollama', base_url: 'http://127.0.0.1:11434', key_required: false },
  };
  type Defaults = Partial<ResolveDeps['defaults']>;
  const deps = (
    over: {
      settings?: { default_model?: Defaults; provider_urls?: Record<string, string> };
      env?: Record<string, string>;
      stored?: Record<string, string>;
      overrides?: Record<string, string>;
    } = {},
  ): ResolveDeps => {
    // The catalog's configured URL: a PUT /url override, else [provider_urls].
    const configuredUrl = (name: string) => over.overrides?.[name] ?? over.settings?.provider_urls?.[name];
    return {
      defaults: { provider: 'openai', model: 'gpt-4o-mini', api_key_env: '', base_url: '', ...over.settings?.default_model },
      env: over.env ?? {},
      maxRetries: 3,
      catalog: {
        provider: (name) => providers[name],
        resolveAlias: (name) => (name === 'mini' ? 'gpt-4o-mini' : name),
        apiKey: (name) => over.stored?.[name] ?? (providers[name]?.env_var ? over.env?.[providers[name].env_var!] : undefined),
        baseUrl: (name) => configuredUrl(name) ?? providers[name]?.base_url,
        configuredUrl,
      },
    };
  };

  it("expands provider 'default' to [default_model] and resolves aliases", () => {
    const t = resolveTarget({ provider: 'default', model: 'default' }, deps({ env: { OPENAI_API_KEY: 'k' } }));
    assert.deepEqual(t, { provider: 'openai', model: 'gpt-4o-mini', apiFormat: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'k', maxRetries: 3 });
    assert.equal(resolveTarget({ provider: 'openai', model: 'mini' }, deps({ env: { OPENAI_API_KEY: 'k' } })).model, 'gpt-4o-mini');
  });

  it('base URL: manifest > [provider_urls] > [default_model].base_url (default provider only) > catalogue', () => {
    const env = { OPENAI_API_KEY: 'k' };
    const dm = { provider: 'openai', model: 'gpt-4o-mini', base_url: 'http://dm.example/v1' };
    const urls = { openai: 'http://urls.example/v1' };
    assert.equal(
      resolveTarget({ provider: 'openai', model: 'm', baseUrl: 'http://ref.example/v1/' }, deps({ env, settings: { default_model: dm, provider_urls: urls } }))
        .baseUrl,
      'http://ref.example/v1',
    );
    assert.equal(
      resolveTarget({ provider: 'openai', model: 'm' }, deps({ env, settings: { default_model: dm, provider_urls: urls } })).baseUrl,
      'http://urls.example/v1',
    );
    assert.equal(resolveTarget({ provider: 'openai', model: 'm' }, deps({ env, settings: { default_model: dm } })).baseUrl, 'http://dm.example/v1');
    assert.equal(resolveTarget({ provider: 'ollama', model: 'm' }, deps({ settings: { default_model: dm } })).baseUrl, 'http://127.0.0.1:11434');
  });

  it('a URL set with PUT /api/providers/{name}/url wins over every configured URL, not over the manifest', () => {
    const env = { OPENAI_API_KEY: 'k' };
    const settings = {
      default_model: { provider: 'openai', model: 'm', base_url: 'http://dm.example/v1' },
      provider_urls: { openai: 'http://urls.example/v1' },
    };
    const overrides = { openai: 'http://put.example/v1' };
    assert.equal(resolveTarget({ provider: 'openai', model: 'm' }, deps({ env, settings, overrides })).baseUrl, 'http://put.example/v1');
    assert.equal(
      resolveTarget({ provider: 'openai', model: 'm', baseUrl: 'http://ref.example/v1' }, deps({ env, settings, overrides })).baseUrl,
      'http://ref.example/v1',
    );
  });

  it('key: manifest api_key_env > [default_model].api_key_env (default provider only) > catalogue', () => {
    const env = { REF_KEY: 'from-ref', DM_KEY: 'from-dm', OPENAI_API_KEY: 'from-catalog' };
    const settings = { default_model: { provider: 'openai', model: 'm', api_key_env: 'DM_KEY' } };
    assert.equal(resolveTarget({ provider: 'openai', model: 'm', apiKeyEnv: 'REF_KEY' }, deps({ env, settings })).apiKey, 'from-ref');
    assert.equal(resolveTarget({ provider: 'openai', model: 'm', apiKeyEnv: 'UNSET_KEY' }, deps({ env, settings })).apiKey, 'from-dm');
    assert.equal(
      resolveTarget({ provider: 'openai', model: 'm' }, deps({ env, settings: { default_model: { provider: 'ollama', model: 'x', api_key_env: 'DM_KEY' } } }))
        .apiKey,
      'from-catalog',
    );
    assert.equal(resolveTarget({ provider: 'openai', model: 'm' }, deps({ env: {}, stored: { openai: 'stored' } })).apiKey, 'stored');
  });

  it('a provider that needs a key and has none is a clear error', () => {
    assert.throws(
      () => resolveTarget({ provider: 'openai', model: 'm' }, deps()),
      (err: unknown) =>
        err instanceof Error &&
        err.name === 'LlmError' &&
        err.message === "no API key for provider 'openai': set OPENAI_API_KEY or POST /api/providers/openai/key" &&
        (err as Error & { status?: number }).status === 401,
    );
    assert.equal(resolveTarget({ provider: 'ollama', model: 'llama3' }, deps()).apiKey, undefined);
  });

  it('an unknown provider with a base URL is OpenAI-compatible; without one it is an error', () => {
    const t = resolveTarget({ provider: 'my-llm', model: 'm1', baseUrl: 'http://127.0.0.1:9999/v1' }, deps({ env: { MY_LLM_API_KEY: 'mine' } }));
    assert.deepEqual([t.apiFormat, t.apiKey], ['openai', 'mine']);
    assert.throws(() => resolveTarget({ provider: 'nowhere', model: 'm' }, deps()), /unknown provider 'nowhere'.*base_url/);
  });
});

/** The same rules through the service, with the real catalog module. */
describe('llm.resolve with the catalog module', () => {
  let h: LlmHarness;
  before(async () => {
    h = await startLlmHarness(
      ['llm', 'llm-openai'],
      (url) =>
        `[default_model]\nprovider = "openai"\nmodel = "gpt-mini"\nbase_url = "${url}/v1"\napi_key_env = "${TEST_KEY_ENV}"\n[provider_urls]\ngroq = "${url}/groq/v1"`,
    );
  });
  after(() => h.stop());

  const llm = () => h.service<LlmService>(llmService.id);

  it('resolves the default model through catalogue aliases, [default_model] and [provider_urls]', () => {
    const t = llm().resolve({ provider: 'default', model: 'default' });
    assert.deepEqual(t, { provider: 'openai', model: 'gpt-4o-mini', apiFormat: 'openai', baseUrl: `${h.fake.url}/v1`, apiKey: 'sk-test-key', maxRetries: 3 });
    const groq = llm().resolve({ provider: 'groq', model: 'llama', apiKeyEnv: TEST_KEY_ENV });
    assert.equal(groq.baseUrl, `${h.fake.url}/groq/v1`);
    assert.equal(groq.apiFormat, 'openai');
  });

  it('names the env var and the key endpoint when a key is missing', () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      assert.throws(() => llm().resolve({ provider: 'anthropic', model: 'claude' }), {
        name: 'LlmError',
        message: "no API key for provider 'anthropic': set ANTHROPIC_API_KEY or POST /api/providers/anthropic/key",
      });
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('calls an unknown OpenAI-compatible provider at its manifest base URL', async () => {
    h.fake.enqueue({ text: 'custom' });
    const result = await h.llm.complete(
      { provider: 'my-llm', model: 'm1', baseUrl: `${h.fake.url}/custom/v1` },
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
    );
    assert.deepEqual(result.content, [{ type: 'text', text: 'custom' }]);
    assert.equal(result.provider, 'my-llm');
    assert.equal(h.fake.requests.at(-1)!.path, '/custom/v1/chat/completions');
  });
});

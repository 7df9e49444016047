import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { deadUrl, fakeServer, service, type FakeServer } from './helpers.ts';

const SECRET = 'sk-test-CATALOG-5ecret-value-0123456789';
const ENV_SECRET = 'env-secret-MISTRAL-abcdef';
const home = mkdtempSync(path.join(tmpdir(), 'catalog-providers-'));
let k: TestKernel;
let upstream: FakeServer;
let ollama: FakeServer;
let lmstudio: FakeServer;
let dead: string;
const bodies: string[] = [];

/** Every reply body is kept, to prove the secrets never come back. */
async function call(pathname: string, init?: RequestInit & { json?: unknown }): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await k.request(pathname, init);
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

before(async () => {
  process.env.MISTRAL_API_KEY = ENV_SECRET;
  for (const name of ['GROQ_API_KEY', 'OPENAI_API_KEY', 'ELEVENLABS_API_KEY', 'GEMINI_API_KEY', 'MINIMAX_API_KEY']) delete process.env[name];
  upstream = await fakeServer((req) => {
    const auth = req.headers.authorization ?? req.headers['x-api-key'] ?? req.headers['x-goog-api-key'];
    if (req.path === '/slow/models') return { delayMs: 3000, json: { data: [] } };
    if (req.path.endsWith('/models') && auth === `Bearer ${SECRET}`) return { json: { object: 'list', data: [{ id: 'gpt-4o-mini' }, { id: 'gpt-4o' }] } };
    if (req.path === '/v1/models' && auth === SECRET) return { json: { data: [{ id: 'claude-sonnet-4-6' }] } };
    if (req.path === '/v1beta/models' && auth === SECRET) return { json: { models: [{ name: 'models/gemini-2.5-flash' }] } };
    // ElevenLabs: its own key header, and a bare array of models.
    if (req.path === '/eleven/models' && req.headers['xi-api-key'] === SECRET)
      return { json: [{ model_id: 'eleven_multilingual_v2' }, { model_id: 'scribe_v1' }] };
    return { status: 401, json: { error: { message: `Incorrect API key provided: ${String(auth)}` } } };
  });
  ollama = await fakeServer((req) =>
    req.path === '/api/tags' ? { json: { models: [{ name: 'llama3.2:latest' }, { name: 'qwen3:8b' }] } } : { status: 404, text: 'not found' },
  );
  lmstudio = await fakeServer((req) => (req.path === '/v1/models' ? { json: { data: [{ id: 'qwen2.5-7b-instruct' }] } } : { status: 404, text: '' }));
  dead = await deadUrl();
  // A user provider file with a wire format no built-in driver speaks.
  mkdirSync(path.join(home, 'providers'));
  writeFileSync(
    path.join(home, 'providers', 'soapy.toml'),
    '[provider]\nid = "soapy"\ndisplay_name = "Soapy"\napi_format = "soap"\nbase_url = "http://127.0.0.1:1"\nkey_required = false\n',
  );
  k = await startTestKernel({
    only: ['catalog', 'error-envelope'],
    home,
    config: `log_level = "debug"\n[provider_urls]\nvllm = "${dead}/v1"\n[catalog]\ntest_timeout_ms = 500\ndetect_timeout_ms = 500\n[catalog.detect_urls]\nollama = "${ollama.url}"\nlmstudio = "${lmstudio.url}/v1"\n`,
  });
});

after(async () => {
  await k?.stop();
  await Promise.all([upstream?.close(), ollama?.close(), lmstudio?.close()]);
  rmSync(home, { recursive: true, force: true });
});

test('GET /api/providers: every provider with auth status, never a key value', async () => {
  const { status, body } = await call('/api/providers');
  assert.equal(status, 200);
  const list = body.providers as Array<Record<string, unknown>>;
  assert.equal(body.total, list.length);
  assert.ok(list.length >= 49);
  const by = (n: string) => list.find((p) => p.name === n)!;
  assert.deepEqual(
    Object.keys(by('openai')).sort(),
    ['api_format', 'auth_status', 'base_url', 'display_name', 'env_var', 'key_required', 'key_source', 'media_capabilities', 'model_count', 'name'].sort(),
  );
  assert.deepEqual(by('openai').media_capabilities, ['ImageGeneration', 'TextToSpeech', 'Transcription']);
  assert.deepEqual(by('mistral').media_capabilities, [], 'a provider without media says so with an empty list');
  assert.equal(by('openai').auth_status, 'missing');
  assert.equal(by('openai').key_source, 'none');
  assert.equal(by('mistral').auth_status, 'configured', 'env var present');
  assert.equal(by('mistral').key_source, 'environment');
  assert.equal(by('ollama').auth_status, 'no_key_needed');
  assert.equal(by('ollama').key_source, 'none');
  assert.equal('env_var' in by('ollama'), false);
  assert.equal(by('vllm').base_url, `${dead}/v1`, 'provider_urls apply');
  assert.ok((by('openai').model_count as number) > 5);
});

test('key_source: a stored key wins over the environment variable, and removing it falls back to the variable', async () => {
  assert.equal((await call('/api/providers/mistral')).body.key_source, 'environment');
  assert.equal((await call('/api/providers/mistral/key', { method: 'POST', json: { api_key: SECRET } })).status, 200);
  assert.equal((await call('/api/providers/mistral')).body.key_source, 'stored');
  assert.equal((await call('/api/providers/mistral/key', { method: 'DELETE' })).status, 200);
  assert.equal((await call('/api/providers/mistral')).body.key_source, 'environment');
});

test('GET /api/providers/{name}: details, models, 404 for unknown', async () => {
  const { status, body } = await call('/api/providers/anthropic');
  assert.equal(status, 200);
  assert.equal(body.api_format, 'anthropic');
  assert.ok((body.models as unknown[]).length > 0);
  const missing = await call('/api/providers/no-such-provider');
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { error: "provider 'no-such-provider' not found" });
});

test('provider key: set → configured → apiKey() → sealed on disk → test ok → delete', async () => {
  assert.equal(service(k).apiKey('openai'), undefined);
  const set = await call('/api/providers/openai/key', { method: 'POST', json: { api_key: SECRET } });
  assert.equal(set.status, 200);
  assert.deepEqual(set.body, { status: 'configured', provider: 'openai' });
  assert.equal(service(k).apiKey('openai'), SECRET, 'effective at once');
  assert.equal((await call('/api/providers/openai')).body.auth_status, 'configured');
  assert.equal((await call('/api/providers/openai')).body.key_source, 'stored');

  // at rest: the key file is 32 bytes, mode 0600 (the secrets module's tests show the database holds no plaintext)
  const keyFile = path.join(home, 'secret.key');
  assert.equal(statSync(keyFile).size, 32);
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);

  // the connectivity test uses it, against a local fake
  await call('/api/providers/openai/url', { method: 'PUT', json: { url: `${upstream.url}/v1` } });
  const t = await call('/api/providers/openai/test', { method: 'POST' });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  assert.equal(t.body.status, 'ok');
  assert.equal(t.body.provider, 'openai');
  assert.equal(typeof t.body.latency_ms, 'number');
  assert.ok(['gpt-4o-mini', 'gpt-4o'].includes(t.body.model_tested as string));
  assert.equal(upstream.requests.at(-1)!.path, '/v1/models');

  const del = await call('/api/providers/openai/key', { method: 'DELETE' });
  assert.deepEqual(del.body, { status: 'removed', provider: 'openai' });
  assert.equal(service(k).apiKey('openai'), undefined);
  assert.equal((await call('/api/providers/openai')).body.auth_status, 'missing');
  assert.equal((await call('/api/providers/openai/key', { method: 'DELETE' })).status, 404);
  // without a key the test refuses before any traffic
  const before = upstream.requests.length;
  const nokey = await call('/api/providers/openai/test', { method: 'POST' });
  assert.equal(nokey.status, 400);
  assert.match(JSON.stringify(nokey.body), /OPENAI_API_KEY/);
  assert.equal(upstream.requests.length, before);
});

test('the reference body {key} is accepted; bad bodies and keyless providers are 400; unknown provider 404', async () => {
  assert.equal((await call('/api/providers/groq/key', { method: 'POST', json: { key: SECRET } })).status, 200);
  assert.equal(service(k).apiKey('groq'), SECRET);
  assert.equal(service(k).apiKey('mistral'), ENV_SECRET, 'env var when nothing is stored');
  for (const body of [{}, { api_key: '' }, { api_key: '   ' }, { api_key: 42 }, { api_key: SECRET, other: 1 }]) {
    assert.equal((await call('/api/providers/groq/key', { method: 'POST', json: body })).status, 400, JSON.stringify(body));
  }
  assert.equal((await call('/api/providers/ollama/key', { method: 'POST', json: { api_key: SECRET } })).status, 400);
  assert.equal((await call('/api/providers/nobody/key', { method: 'POST', json: { api_key: SECRET } })).status, 404);
});

test('provider test failures: rejected key, unreachable, timeout — 502 saying what failed, never the key', async () => {
  await call('/api/providers/deepseek/key', { method: 'POST', json: { api_key: `${SECRET}-wrong` } });
  await call('/api/providers/deepseek/url', { method: 'PUT', json: { url: `${upstream.url}/v1` } });
  const rejected = await call('/api/providers/deepseek/test', { method: 'POST' });
  assert.equal(rejected.status, 502);
  assert.match(String(rejected.body.error), /^provider 'deepseek' test failed: the provider rejected the API key \(HTTP 401\)/);
  assert.match(String(rejected.body.error), /Bearer \*\*\*/, 'the echoed key is scrubbed');

  await call('/api/providers/deepseek/url', { method: 'PUT', json: { url: `${dead}/v1` } });
  const unreachable = await call('/api/providers/deepseek/test', { method: 'POST' });
  assert.equal(unreachable.status, 502);
  assert.match(JSON.stringify(unreachable.body), /unreachable/);

  await call('/api/providers/deepseek/url', { method: 'PUT', json: { url: `${upstream.url}/slow` } });
  const started = Date.now();
  const slow = await call('/api/providers/deepseek/test', { method: 'POST' });
  assert.equal(slow.status, 502);
  assert.match(JSON.stringify(slow.body), /no answer within 500 ms/);
  assert.ok(Date.now() - started < 2500);
});

test('provider test speaks each format: anthropic x-api-key, gemini x-goog-api-key, ollama /api/tags', async () => {
  for (const name of ['anthropic', 'gemini']) {
    await call(`/api/providers/${name}/key`, { method: 'POST', json: { api_key: SECRET } });
    await call(`/api/providers/${name}/url`, { method: 'PUT', json: { url: upstream.url } });
    const t = await call(`/api/providers/${name}/test`, { method: 'POST' });
    assert.equal(t.status, 200, `${name}: ${JSON.stringify(t.body)}`);
  }
  assert.equal((await call('/api/providers/gemini/test', { method: 'POST' })).body.model_tested, 'gemini-2.5-flash');
  await call('/api/providers/ollama/url', { method: 'PUT', json: { url: ollama.url } });
  const o = await call('/api/providers/ollama/test', { method: 'POST' });
  assert.equal(o.status, 200);
});

test('elevenlabs has no chat models; its test lists its models with xi-api-key', async () => {
  const detail = await call('/api/providers/elevenlabs');
  assert.equal(detail.status, 200);
  assert.equal(detail.body.display_name, 'ElevenLabs');
  assert.equal(detail.body.env_var, 'ELEVENLABS_API_KEY');
  assert.equal(detail.body.model_count, 0);
  assert.deepEqual(detail.body.media_capabilities, ['TextToSpeech', 'Transcription']);
  assert.ok((detail.body.media_models as Array<{ id: string }>).some((m) => m.id === 'scribe_v1'));
  await call('/api/providers/elevenlabs/key', { method: 'POST', json: { api_key: SECRET } });
  await call('/api/providers/elevenlabs/url', { method: 'PUT', json: { url: `${upstream.url}/eleven` } });
  const t = await call('/api/providers/elevenlabs/test', { method: 'POST' });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  assert.equal(t.body.model_tested, 'eleven_multilingual_v2');
  assert.ok(upstream.requests.some((r) => r.path === '/eleven/models' && r.headers['xi-api-key'] === SECRET && !r.headers.authorization));
  await call('/api/providers/elevenlabs/key', { method: 'DELETE' });
});

test('a provider of a format whose listing the test does not know gets a 400 naming the format', async () => {
  const t = await call('/api/providers/soapy/test', { method: 'POST' });
  assert.equal(t.status, 400);
  assert.match(
    String(t.body.error),
    /provider 'soapy' speaks API format 'soap', whose model listing the test does not know \(openai, anthropic, gemini, ollama, elevenlabs\)/,
  );
});

test('PUT /api/providers/{name}/url validates and persists', async () => {
  const ok = await call('/api/providers/together/url', { method: 'PUT', json: { url: 'http://127.0.0.1:9999/v1/' } });
  assert.deepEqual(ok.body, { status: 'updated', provider: 'together', base_url: 'http://127.0.0.1:9999/v1' });
  assert.equal(service(k).baseUrl('together'), 'http://127.0.0.1:9999/v1');
  for (const url of ['ftp://x.example', 'not a url', '', 'http://user:pw@127.0.0.1/']) {
    assert.equal((await call('/api/providers/together/url', { method: 'PUT', json: { url } })).status, 400, url);
  }
  assert.equal((await call('/api/providers/together/url', { method: 'PUT', json: { url: 5 } })).status, 400);
  assert.equal((await call('/api/providers/nobody/url', { method: 'PUT', json: { url: 'http://127.0.0.1' } })).status, 404);
  const reset = await call('/api/providers/together/url', { method: 'PUT', json: { url: null } });
  assert.equal(reset.status, 200);
  assert.notEqual(service(k).baseUrl('together'), 'http://127.0.0.1:9999/v1', 'null removes the override');
  assert.equal(service(k).configuredUrl('together'), undefined);
});

test('detect: fake ollama and lmstudio are listed; an unreachable vllm is reachable:false; other names 404', async () => {
  const o = await call('/api/providers/ollama/detect');
  assert.equal(o.status, 200);
  assert.deepEqual(
    { ...o.body, latency_ms: undefined },
    { provider: 'ollama', reachable: true, base_url: ollama.url, models: ['llama3.2:latest', 'qwen3:8b'], latency_ms: undefined },
  );
  const l = await call('/api/providers/lmstudio/detect');
  assert.equal(l.body.reachable, true);
  assert.deepEqual(l.body.models, ['qwen2.5-7b-instruct']);
  const v = await call('/api/providers/vllm/detect');
  assert.equal(v.status, 200);
  assert.equal(v.body.reachable, false);
  assert.deepEqual(v.body.models, []);
  assert.equal(v.body.base_url, `${dead}/v1`);
  const cpp = await call('/api/providers/llama.cpp/detect');
  assert.equal(cpp.status, 200);
  assert.equal(cpp.body.provider, 'llamacpp');
  assert.equal((await call('/api/providers/openai/detect')).status, 404);
});

test('secrets never appear in a reply or in a log line', async () => {
  await k.stop();
  const logs = k.logLines().join('\n');
  assert.ok(logs.length > 0, 'the log has content');
  assert.ok(logs.includes('API key stored for provider'), 'the key route logged');
  assert.ok(bodies.length > 20);
  for (const text of [...bodies, logs]) {
    assert.ok(!text.includes(SECRET), 'stored secret leaked');
    assert.ok(!text.includes(ENV_SECRET), 'env secret leaked');
  }
  k = await startTestKernel({ only: ['catalog', 'error-envelope'], home });
  assert.equal(service(k).apiKey('groq'), SECRET, 'the stored key survives a restart');
});

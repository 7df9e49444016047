/**
 * The behaviour every media driver module owes the media module, as node:test cases run through a real kernel (the
 * media module, the driver module) and its HTTP routes, against the driver's fake provider (none for media-local).
 * A driver's test file calls mediaConformance once and adds the checks of its wire format in `more`. The types restate
 * the parts of @talon/media the suite uses, so that the testing kit does not depend on the media module.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'smol-toml';
import { sampleWav } from '../../test/fakes/media-samples.ts';
import { startTestKernel, type TestKernel } from './kernel.ts';
import { waitFor } from './wait.ts';

export type MediaCapability = 'ImageGeneration' | 'TextToSpeech' | 'VideoGeneration' | 'MusicGeneration' | 'Transcription';

/** A fake provider: where it listens, and the next request it answers with a refusal, an outage or a 429. */
export interface MediaFake {
  url: string;
  stop(): Promise<void>;
  /** 'refuse': a 400 whose message contains MEDIA_FAKE_REFUSAL; 'outage': a 5xx; 'rate_limit': 429 with Retry-After: 7. */
  failNext(mode: 'refuse' | 'outage' | 'rate_limit'): void;
}

/** The reason a fake gives when it refuses (failNext('refuse')): the media module's 400 must pass it on. */
export const MEDIA_FAKE_REFUSAL = 'refused by the fake content filter';

/** The provider environment variables a media test clears first (any other *_API_KEY too). */
export const MEDIA_PROVIDER_ENV = [
  'OPENAI_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'GOOGLE_CLOUD_API_KEY',
  'ELEVENLABS_API_KEY',
  'MINIMAX_API_KEY',
  'MINIMAX_CN_API_KEY',
  'GROQ_API_KEY',
  'TOGETHER_API_KEY',
  'FIREWORKS_API_KEY',
  'REPLICATE_API_TOKEN',
  'FAL_KEY',
];

export interface MediaConformanceOptions {
  /** Title of the suite, e.g. 'media-openai'. */
  name: string;
  /** The modules to boot: ['media-openai'] (media, agents... come as dependencies). */
  only: string[];
  /** The provider's name, as GET /api/media/providers lists it: 'openai'. */
  provider: string;
  /** The key(s), set in the environment only while the kernel runs: { OPENAI_API_KEY: 'test-key' }. */
  env: Record<string, string>;
  /** What it must list and serve. */
  capabilities: MediaCapability[];
  /** Starts the provider's fake; absent for media-local. */
  fake?: () => Promise<MediaFake>;
  /** config.toml text pointing the provider at the fake, e.g. `[provider_urls]\nopenai = "${url}/v1"`. */
  config?: (fakeUrl: string) => string;
}

/** What the media module's afterCall hook reports. */
export interface MediaTestCallRecord {
  kind: string;
  provider: string;
  model: string;
  units: number;
  unit: string;
  agentId?: string;
  taskId?: string;
  latencyMs: number;
  ok: boolean;
  error?: string;
}

export interface MediaHarness {
  kernel: TestKernel;
  fake?: MediaFake;
  /** Every afterCall record, in order. */
  calls: MediaTestCallRecord[];
  /** A JSON POST to /api/media/<kind> ('image', 'speech', 'music', 'video'). */
  post(kind: string, body: unknown): Promise<Response>;
  /** A raw audio body to POST /api/media/transcribe (with `?provider=`). */
  transcribe(audio: Buffer, contentType: string, query?: Record<string, string>): Promise<Response>;
  /** A served file: its answer and bytes. */
  file(url: string): Promise<{ response: Response; bytes: Buffer }>;
  stop(): Promise<void>;
}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
const merge = (base: Table, over: Table): Table => {
  const out: Table = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isTable(v) && isTable(out[k]) ? merge(out[k], v) : v;
  return out;
};

/** The provider keys in the environment, but those in `keep`. */
const providerEnv = (keep: Record<string, string>) =>
  Object.keys(process.env).filter((n) => (MEDIA_PROVIDER_ENV.includes(n) || /_API_(KEY|TOKEN)$/.test(n)) && !(n in keep));

/** Removes every provider key from the environment but those in `keep`. */
export function clearProviderEnv(keep: Record<string, string> = {}): void {
  for (const name of providerEnv(keep)) delete process.env[name];
}

/** Fails naming any provider key left in the environment but those in `keep` (a leak would bill a real account). */
export function assertNoProviderEnv(keep: Record<string, string> = {}): void {
  const leaked = providerEnv(keep);
  assert.deepEqual(leaked, [], `provider keys leaked into a media test: ${leaked.join(', ')}`);
}

/** Fast video polling for the suite; the driver's own config text wins. */
const SUITE_CONFIG: Table = { media: { video_poll_first_secs: 0.05, video_poll_factor: 1.5, video_poll_max_secs: 0.2 } };

export async function startMediaHarness(options: MediaConformanceOptions): Promise<MediaHarness> {
  clearProviderEnv();
  const fake = options.fake ? await options.fake() : undefined;
  Object.assign(process.env, options.env);
  let kernel: TestKernel;
  try {
    const config = stringify(merge(SUITE_CONFIG, parse(options.config?.(fake?.url ?? '') ?? '')));
    // error-envelope: errors are answered as {error} the way the service answers them.
    kernel = await startTestKernel({ only: [...options.only, 'error-envelope'], config });
  } catch (err) {
    await fake?.stop();
    clearProviderEnv();
    throw err;
  }
  const harness: MediaHarness = {
    kernel,
    fake,
    calls: [],
    post: (kind, body) => kernel.request(`/api/media/${kind}`, { method: 'POST', json: body }),
    transcribe: (audio, contentType, query = {}) =>
      kernel.request(`/api/media/transcribe?${new URLSearchParams(query)}`, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: new Uint8Array(audio),
      }),
    async file(url) {
      const response = await kernel.request(url);
      return { response, bytes: Buffer.from(await response.arrayBuffer()) };
    },
    async stop() {
      await kernel.stop();
      await fake?.stop();
      clearProviderEnv();
    },
  };
  const hooks = kernel.kernel.hooks.catalogue('media.hooks')?.hooks as
    { afterCall: { tapPromise(n: string, f: (r: MediaTestCallRecord) => Promise<void>): void } } | undefined;
  if (!hooks) throw new Error('the media module is not loaded: add a media driver module (or media) to `only`');
  hooks.afterCall.tapPromise('test', async (record) => void harness.calls.push(record));
  return harness;
}

interface Route {
  /** The media kind of the afterCall record (and, but for transcription, the route's last segment). */
  kind: string;
  unit: string;
  /** The JSON body of a call, for a provider. */
  body?: (provider: string) => Table;
  type: RegExp;
}

const ROUTES: Record<MediaCapability, Route> = {
  ImageGeneration: { kind: 'image', unit: 'images', body: (provider) => ({ prompt: 'a red fox in the snow', provider }), type: /^image\// },
  TextToSpeech: { kind: 'speech', unit: 'characters', body: (provider) => ({ text: 'Hello from the media test.', provider }), type: /^audio\// },
  MusicGeneration: {
    kind: 'music',
    unit: 'songs',
    body: (provider) => ({ prompt: 'a calm piano piece', instrumental: true, provider }),
    type: /^audio\//,
  },
  VideoGeneration: { kind: 'video', unit: 'seconds', body: (provider) => ({ prompt: 'waves on a beach', provider, duration_secs: 1 }), type: /^video\// },
  Transcription: { kind: 'transcription', unit: 'seconds', type: /^/ },
};

/** One call of a capability through its route, as a client makes it. */
async function call(h: MediaHarness, capability: MediaCapability, provider: string): Promise<Response> {
  if (capability === 'Transcription') {
    return h.transcribe(sampleWav(1, 16000), 'audio/wav', { provider });
  }
  const route = ROUTES[capability];
  return h.post(route.kind, route.body!(provider));
}

async function json<T = Table>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  assert.equal(response.status, status, `expected ${status}, got ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** The file behind a result URL: served by the upload store, its type sniffed, nosniff set. */
async function assertServed(h: MediaHarness, url: string, type: RegExp): Promise<Buffer> {
  assert.match(url, /^\/api\/uploads\/[^/]+$/, 'a result is a file this service serves');
  const { response, bytes } = await h.file(url);
  assert.equal(response.status, 200, `GET ${url}`);
  assert.match(response.headers.get('content-type') ?? '', type);
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
  assert.ok(bytes.length > 0);
  return bytes;
}

/** A completed video task, polled through GET /api/media/video/{id} (bounded). */
async function completedVideo(h: MediaHarness, taskId: string, provider: string): Promise<Table> {
  return waitFor(
    async () => {
      const body = await json(await h.kernel.request(`/api/media/video/${taskId}?provider=${provider}`), 200);
      assert.ok(body.status !== 'failed' && body.status !== 'cancelled', `the task ended ${String(body.status)}: ${String(body.error)}`);
      return body.status === 'completed' ? body : undefined;
    },
    30_000,
    `video task ${taskId} to complete`,
  );
}

async function assertCapability(h: MediaHarness, capability: MediaCapability, provider: string): Promise<void> {
  const route = ROUTES[capability];
  const response = await call(h, capability, provider);
  if (capability === 'ImageGeneration') {
    const body = await json<{ images: Array<{ url: string }>; provider: string; model: string }>(response, 200);
    assert.equal(body.provider, provider);
    assert.ok(body.images.length >= 1 && body.model);
    await assertServed(h, body.images[0].url, route.type);
  } else if (capability === 'TextToSpeech' || capability === 'MusicGeneration') {
    const body = await json<{ url: string; provider: string; format: string; duration_ms: number; sample_rate: number }>(response, 200);
    assert.equal(body.provider, provider);
    assert.ok(Number.isInteger(body.duration_ms) && body.duration_ms > 0, `measured duration_ms: ${body.duration_ms}`);
    assert.ok(Number.isInteger(body.sample_rate) && body.sample_rate > 0, `measured sample_rate: ${body.sample_rate}`);
    await assertServed(h, body.url, route.type);
  } else if (capability === 'VideoGeneration') {
    const submitted = await json<{ task_id: string; provider: string }>(response, 202);
    assert.equal(submitted.provider, provider);
    const done = await completedVideo(h, submitted.task_id, provider);
    const result = done.result as { file_url: string; provider: string; width: number; height: number; duration_secs: number };
    assert.equal(result.provider, provider);
    assert.ok(result.width > 0 && result.height > 0 && result.duration_secs > 0, `measured: ${JSON.stringify(result)}`);
    await assertServed(h, result.file_url, route.type);
  } else {
    const body = await json<{ text: string; provider: string; duration_ms: number }>(response, 200);
    assert.equal(body.provider, provider);
    assert.equal(typeof body.text, 'string');
    if (h.fake) assert.ok(body.text.trim(), 'the transcription has text');
    assert.ok(body.duration_ms >= 900 && body.duration_ms <= 1100, `duration_ms of a 1 s WAV: ${body.duration_ms}`);
  }
  const record = await waitFor(
    () => h.calls.find((c) => c.kind === route.kind && c.provider === provider && c.ok),
    30_000,
    `the afterCall record of ${route.kind}`,
  );
  assert.equal(record.unit, route.unit);
  assert.ok(record.units > 0, `units metered: ${record.units}`);
}

/** Registers the conformance suite; `more` adds the driver's own cases, with the same running harness. */
export function mediaConformance(options: MediaConformanceOptions, more?: (h: () => MediaHarness) => void): void {
  const { provider } = options;
  describe(`${options.name}: media conformance`, () => {
    let h: MediaHarness;
    before(async () => {
      h = await startMediaHarness(options);
    });
    after(() => h?.stop());

    it('runs with no provider key from the environment but its own', () => assertNoProviderEnv(options.env));

    it(`is listed in GET /api/media/providers as configured with ${options.capabilities.join(', ')}`, async () => {
      const body = await json<{ providers: Array<{ name: string; configured: boolean; capabilities: string[] }> }>(
        await h.kernel.request('/api/media/providers'),
        200,
      );
      const entry = body.providers.find((p) => p.name === provider);
      assert.ok(entry, `${provider} is listed`);
      assert.equal(entry.configured, true);
      assert.deepEqual([...entry.capabilities].sort(), [...options.capabilities].sort());
    });

    for (const capability of options.capabilities) {
      it(`serves ${capability} through its route as a stored file, metered`, () => assertCapability(h, capability, provider));
    }

    const keys = Object.keys(options.env);
    it('without its key: listed as not configured, and an explicit call is 422 naming the key', { skip: keys.length ? false : 'it needs no key' }, async () => {
      const saved = { ...options.env };
      for (const k of keys) delete process.env[k];
      try {
        const list = await json<{ providers: Array<{ name: string; configured: boolean }> }>(await h.kernel.request('/api/media/providers'), 200);
        assert.equal(list.providers.find((p) => p.name === provider)?.configured, false);
        const body = await json<{ error: string }>(await call(h, options.capabilities[0], provider), 422);
        assert.ok(
          keys.some((k) => body.error.includes(k)),
          `the error names the key: ${body.error}`,
        );
      } finally {
        Object.assign(process.env, saved);
      }
    });

    const noFake = options.fake ? false : 'no fake provider (a local driver)';
    for (const capability of options.capabilities) {
      it(`${capability}: a refusal is 400 with the provider's reason, an outage 502, a 429 is 429 with Retry-After`, { skip: noFake }, async () => {
        h.fake!.failNext('refuse');
        const refused = await json<{ error: string }>(await call(h, capability, provider), 400);
        assert.ok(refused.error.includes(MEDIA_FAKE_REFUSAL), `the provider's reason: ${refused.error}`);
        h.fake!.failNext('outage');
        await json(await call(h, capability, provider), 502);
        h.fake!.failNext('rate_limit');
        const limited = await call(h, capability, provider);
        await json(limited, 429);
        assert.ok(Number(limited.headers.get('retry-after')) >= 1, `Retry-After: ${limited.headers.get('retry-after')}`);
      });
    }

    more?.(() => h);
  });
}

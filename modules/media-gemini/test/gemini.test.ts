import { it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MediaDriverKit, MediaError, VideoPoll } from '@talon/media';
import { mediaConformance, startGoogleMediaFake, type GoogleMediaFake, type MediaHarness } from '@talon/testing';
import { geminiDriver } from '../driver.ts';

let fake: GoogleMediaFake;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
const signal = () => AbortSignal.timeout(10_000);

/** The driver on the running kernel's kit: the catalogue's key and [provider_urls] base, the net module's downloads. */
const driverOf = (h: MediaHarness) => geminiDriver(h.kernel.kernel.services.view<MediaDriverKit>('media.kit'));

async function rejection(promise: Promise<unknown>): Promise<MediaError> {
  try {
    await promise;
  } catch (err) {
    assert.equal((err as Error).name, 'MediaError', String(err));
    return err as MediaError;
  }
  assert.fail('expected a MediaError');
}

/** Polls an operation until it is no longer processing (bounded). */
async function settle(poll: () => Promise<VideoPoll>): Promise<VideoPoll> {
  for (let i = 0; i < 10; i++) {
    const state = await poll();
    if (state.state !== 'processing') return state;
  }
  assert.fail('the operation never finished');
}

mediaConformance(
  {
    name: 'media-gemini',
    only: ['media-gemini'],
    provider: 'gemini',
    env: { GEMINI_API_KEY: 'test-key' },
    capabilities: ['ImageGeneration', 'VideoGeneration'],
    fake: async () => (fake = await startGoogleMediaFake({ key: 'test-key' })),
    config: (url) => `[provider_urls]\ngemini = "${url}"`,
  },
  (harness) => {
    it('asks a Gemini image model through generateContent with the key in x-goog-api-key, never in the URL', async () => {
      const result = await driverOf(harness()).generateImage!({ prompt: 'a red fox', width: 1600, height: 900, count: 2, signal: signal() });
      assert.equal(result.model, 'gemini-3.1-flash-image');
      assert.equal(result.images.length, 2);
      for (const image of result.images) assert.deepEqual(image.subarray(0, 4), PNG);
      const sent = fake.requests.slice(-2);
      for (const r of sent) {
        assert.equal(r.path, '/v1beta/models/gemini-3.1-flash-image:generateContent');
        assert.equal(r.headers['x-goog-api-key'], 'test-key');
        assert.doesNotMatch(r.path, /key=/);
        assert.deepEqual(r.body.generationConfig, { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9' } });
        assert.deepEqual(r.body.contents, [{ role: 'user', parts: [{ text: 'a red fox' }] }]);
      }
    });

    it('asks an Imagen model through :predict with sampleCount, aspectRatio and includeRaiReason', async () => {
      const result = await driverOf(harness()).generateImage!({
        prompt: 'a lake',
        model: 'imagen-4.0-generate-001',
        width: 800,
        height: 600,
        count: 3,
        signal: signal(),
      });
      assert.equal(result.images.length, 3);
      const sent = fake.requests.at(-1)!;
      assert.equal(sent.path, '/v1beta/models/imagen-4.0-generate-001:predict');
      assert.deepEqual(sent.body, { instances: [{ prompt: 'a lake' }], parameters: { sampleCount: 3, aspectRatio: '4:3', includeRaiReason: true } });
    });

    it("answers Imagen's raiFilteredReason as a 400 with the reason", async () => {
      const response = await harness().post('image', { prompt: 'something forbidden', provider: 'gemini', model: 'imagen-4.0-generate-001' });
      const body = (await response.json()) as { error: string };
      assert.equal(response.status, 400, body.error);
      assert.match(body.error, /safety filter threshold prohibited/);
    });

    it("answers a Gemini image model's IMAGE_SAFETY stop as a 400 with the reason", async () => {
      const response = await harness().post('image', { prompt: 'something forbidden', provider: 'gemini' });
      const body = (await response.json()) as { error: string };
      assert.equal(response.status, 400, body.error);
      assert.match(body.error, /IMAGE_SAFETY/);
    });

    it("takes Google's 400 API_KEY_INVALID for a key to fix (not_configured), not a refused prompt", async () => {
      process.env.GEMINI_API_KEY = 'a-wrong-key';
      try {
        const err = await rejection(driverOf(harness()).generateImage!({ prompt: 'a fox', count: 1, signal: signal() }));
        assert.equal(err.kind, 'not_configured');
        assert.match(err.message, /GEMINI_API_KEY/);
        assert.doesNotMatch(err.message, /a-wrong-key/);
      } finally {
        process.env.GEMINI_API_KEY = 'test-key';
      }
    });

    it('starts Veo as a long-running operation, polls it to done and downloads the video with the key', async () => {
      const driver = driverOf(harness());
      const submitted = await driver.submitVideo!({ prompt: 'waves', durationSecs: 5, signal: signal() });
      assert.match(submitted.providerTaskId, /^models\/veo-3\.1-generate-preview\/operations\/[0-9a-f]+$/);
      const start = fake.requests.at(-1)!;
      assert.equal(start.path, '/v1beta/models/veo-3.1-generate-preview:predictLongRunning');
      assert.deepEqual(start.body, { instances: [{ prompt: 'waves' }], parameters: { durationSeconds: 6 } });
      assert.deepEqual(await driver.pollVideo!(submitted.providerTaskId, signal()), { state: 'processing' });
      const done = await settle(() => driver.pollVideo!(submitted.providerTaskId, signal()));
      assert.equal(done.state, 'completed');
      assert.equal(done.state === 'completed' && done.model, 'veo-3.1-generate-preview');
      assert.equal(done.state === 'completed' && done.video.subarray(4, 8).toString('latin1'), 'ftyp');
      const fetched = fake.requests.at(-1)!;
      assert.match(fetched.path, /^\/v1beta\/files\/[0-9a-f]+:download\?alt=media$/);
      assert.equal(fetched.headers['x-goog-api-key'], 'test-key');
    });

    it('asks Veo for a length it makes: 4, 6 or 8 seconds (Veo 3), 5 to 8 (Veo 2)', async () => {
      const driver = driverOf(harness());
      const asked = async (durationSecs: number, model?: string) => {
        await driver.submitVideo!({ prompt: 'waves', durationSecs, model, signal: signal() });
        return (fake.requests.at(-1)!.body.parameters as { durationSeconds: number }).durationSeconds;
      };
      assert.deepEqual([await asked(1), await asked(4), await asked(7), await asked(30)], [4, 4, 8, 8]);
      assert.deepEqual([await asked(1, 'veo-2.0-generate-001'), await asked(7.5, 'veo-2.0-generate-001')], [5, 8]);
    });

    it('never sends the key to a video URI on another origin', async () => {
      const seen: http.IncomingHttpHeaders[] = [];
      const other = http.createServer((req, res) => {
        seen.push(req.headers);
        res.writeHead(200, { 'content-type': 'video/mp4' }).end('not a video');
      });
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      fake.setVideoUriBase(`http://127.0.0.1:${(other.address() as AddressInfo).port}`);
      try {
        const driver = driverOf(harness());
        const { providerTaskId } = await driver.submitVideo!({ prompt: 'waves', signal: signal() });
        const err = await rejection(settle(() => driver.pollVideo!(providerTaskId, signal())));
        assert.equal(err.kind, 'outage');
        assert.deepEqual(seen, [], 'nothing, and so no key, reached the other origin');
      } finally {
        fake.setVideoUriBase('');
        other.close();
      }
    });

    it("ends a task with the operation's error message, or with the filter's reasons", async () => {
      const driver = driverOf(harness());
      const failed = await driver.submitVideo!({ prompt: 'make it explode', signal: signal() });
      assert.deepEqual(await settle(() => driver.pollVideo!(failed.providerTaskId, signal())), {
        state: 'failed',
        error: 'Video generation failed due to an internal error.',
      });
      const filtered = await driver.submitVideo!({ prompt: 'something forbidden', signal: signal() });
      const state = await settle(() => driver.pollVideo!(filtered.providerTaskId, signal()));
      assert.equal(state.state, 'failed');
      assert.match(state.state === 'failed' ? state.error : '', /content filter: The video violates the usage guidelines/);
    });

    it('refuses an operation name that could leave the operations path, before any request carries the key', async () => {
      const driver = driverOf(harness());
      const before = fake.requests.length;
      for (const name of ['models/veo/operations/../../files/x', 'operations/x?alt=media', 'https://elsewhere.example/operations/x', 'operations/x#y']) {
        const err = await rejection(driver.pollVideo!(name, signal()));
        assert.equal(err.kind, 'outage');
      }
      assert.equal(fake.requests.length, before);
    });

    it('lists both capabilities and a setup hint naming the key when no key is set', async () => {
      delete process.env.GEMINI_API_KEY;
      try {
        const driver = driverOf(harness());
        assert.equal(driver.configured(), false);
        assert.deepEqual(driver.capabilities(), ['ImageGeneration', 'VideoGeneration']);
        assert.match(driver.setupHint(), /GEMINI_API_KEY/);
        const err = await rejection(driver.generateImage!({ prompt: 'a fox', count: 1, signal: signal() }));
        assert.equal(err.kind, 'not_configured');
      } finally {
        process.env.GEMINI_API_KEY = 'test-key';
      }
    });
  },
);

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  mediaConformance,
  OPENAI_FAKE_KEY,
  sampleWav,
  startMediaHarness,
  startOpenaiMediaFake,
  toneFile,
  type FakeMediaRequest,
  type MediaHarness,
  type OpenaiMediaFake,
} from '@talon/testing';

const hasFfmpeg = (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && existsSync(path.join(dir, 'ffmpeg')));
const capabilities = ['ImageGeneration', 'TextToSpeech', 'Transcription'] as const;

async function ok<T = Record<string, unknown>>(response: Response): Promise<T> {
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text) as T;
}

/** The last request the fake got at `path` (under /v1). */
function sent(h: MediaHarness, path: string): FakeMediaRequest {
  const found = (h.fake as OpenaiMediaFake).requests.filter((r) => r.path === `/v1${path}`).at(-1);
  assert.ok(found, `a request to ${path}`);
  return found;
}

mediaConformance(
  {
    name: 'media-openai',
    only: ['media-openai', 'error-envelope'],
    provider: 'openai',
    env: { OPENAI_API_KEY: OPENAI_FAKE_KEY },
    capabilities: [...capabilities],
    fake: () => startOpenaiMediaFake(),
    config: (url) => `[provider_urls]\nopenai = "${url}/v1"`,
  },
  (harness) => {
    it('gpt-image-1 by default: the size as "WxH", n, no response_format (it refuses one), the key as a bearer token', async () => {
      const h = harness();
      const body = await ok<{ images: Array<{ url: string }>; model: string }>(
        await h.post('image', { prompt: 'a lighthouse', provider: 'openai', width: 1536, height: 1024, count: 2 }),
      );
      const request = sent(h, '/images/generations');
      assert.deepEqual(request.params, { model: 'gpt-image-1', prompt: 'a lighthouse', n: 2, size: '1536x1024' });
      assert.equal(request.headers.authorization, `Bearer ${OPENAI_FAKE_KEY}`);
      assert.equal(body.model, 'gpt-image-1');
      assert.equal(body.images.length, 2);
      const [a, b] = await Promise.all(body.images.map((i) => h.file(i.url)));
      assert.notDeepEqual(a.bytes, b.bytes, 'each image is its own file');
    });

    it('dall-e models are asked for b64_json; dall-e-3 once per image (it takes n = 1), its revised prompt answered', async () => {
      const h = harness();
      const before = (h.fake as OpenaiMediaFake).requests.length;
      const body = await ok<{ images: unknown[]; revised_prompt: string }>(
        await h.post('image', { prompt: 'a fox', provider: 'openai', model: 'dall-e-3', width: 1024, count: 2 }),
      );
      const calls = (h.fake as OpenaiMediaFake).requests.slice(before);
      assert.equal(calls.length, 2);
      for (const call of calls) assert.deepEqual(call.params, { model: 'dall-e-3', prompt: 'a fox', n: 1, size: '1024x1024', response_format: 'b64_json' });
      assert.equal(body.images.length, 2);
      assert.equal(body.revised_prompt, 'A detailed picture of a fox');
    });

    it("a size the model does not make is the provider's 400 naming it", async () => {
      const h = harness();
      const response = await h.post('image', { prompt: 'a fox', provider: 'openai', width: 300, height: 300 });
      assert.equal(response.status, 400);
      assert.match(((await response.json()) as { error: string }).error, /Invalid value: '300x300'/);
    });

    it('an image URL a compatible server answers with is downloaded and stored, never handed out', async () => {
      const h = harness();
      const body = await ok<{ images: Array<{ url: string }> }>(await h.post('image', { prompt: 'a fox', provider: 'openai', model: 'flux-schnell' }));
      assert.equal(sent(h, '/images/generations').params.response_format, undefined);
      assert.ok(
        (h.fake as OpenaiMediaFake).requests.some((r) => r.path === '/files/img-0.png'),
        'the returned URL was fetched',
      );
      assert.match(body.images[0].url, /^\/api\/uploads\//);
      const { response, bytes } = await h.file(body.images[0].url);
      assert.equal(response.headers.get('content-type'), 'image/png');
      assert.equal(bytes.subarray(1, 4).toString('latin1'), 'PNG');
    });

    it('speech: tts-1 and alloy by default, mp3; the voice, speed and format asked are sent, ogg as opus', async () => {
      const h = harness();
      const first = await ok<{ format: string; model: string }>(await h.post('speech', { text: 'Hello there.', provider: 'openai' }));
      assert.deepEqual(sent(h, '/audio/speech').params, { model: 'tts-1', input: 'Hello there.', voice: 'alloy', response_format: 'mp3' });
      assert.equal(first.format, 'mp3');
      assert.equal(first.model, 'tts-1');
      const asked = await ok<{ format: string; sample_rate: number }>(
        await h.post('speech', { text: 'Hi.', provider: 'openai', voice: 'nova', speed: 1.25, format: 'ogg', model: 'tts-1-hd' }),
      );
      assert.deepEqual(sent(h, '/audio/speech').params, { model: 'tts-1-hd', input: 'Hi.', voice: 'nova', response_format: 'opus', speed: 1.25 });
      assert.equal(asked.sample_rate, 48000);
      const wav = await ok<{ format: string; sample_rate: number; duration_ms: number }>(
        await h.post('speech', { text: 'Hi.', provider: 'openai', format: 'wav' }),
      );
      assert.equal(sent(h, '/audio/speech').params.response_format, 'wav');
      assert.deepEqual([wav.format, wav.sample_rate, wav.duration_ms], ['wav', 24000, 1000]);
    });

    it('a voice the provider does not have is its 400 naming the voice', async () => {
      const response = await harness().post('speech', { text: 'Hi.', provider: 'openai', voice: 'Rachel' });
      assert.equal(response.status, 400);
      assert.match(((await response.json()) as { error: string }).error, /voice/);
    });

    it('transcription: multipart with the file named by its format, model whisper-1, the language as ISO-639-1', async () => {
      const h = harness();
      const body = await ok<{ text: string; model: string }>(await h.transcribe(sampleWav(1, 16000), 'audio/wav', { provider: 'openai', language: 'en-US' }));
      const request = sent(h, '/audio/transcriptions');
      assert.match(String(request.headers['content-type']), /^multipart\/form-data; boundary=/);
      const file = request.params.file as { name: string; type: string; content: Buffer };
      assert.equal(file.name, 'audio.wav');
      assert.equal(file.type, 'audio/wav');
      assert.deepEqual(file.content, sampleWav(1, 16000));
      assert.equal(request.params.model, 'whisper-1');
      assert.equal(request.params.language, 'en');
      assert.deepEqual([body.text, body.model], ['Hello from the fake transcriber.', 'whisper-1']);
    });
  },
);

describe('media-openai: a keyless OpenAI-compatible server ([media_openai] keyless)', () => {
  let h: MediaHarness;
  before(async () => {
    h = await startMediaHarness({
      name: 'media-openai keyless',
      only: ['media-openai', 'error-envelope'],
      provider: 'openai',
      env: {},
      capabilities: [...capabilities],
      fake: () => startOpenaiMediaFake({ key: null }),
      config: (url) =>
        `[provider_urls]\nopenai = "${url}/v1"\n\n[media_openai]\nkeyless = true\ntranscription_model = "whisper-large-v3-turbo"\nvoice = "echo"`,
    });
  });
  after(() => h?.stop());

  it('is configured with no key and sends no Authorization header', async () => {
    const list = await ok<{ providers: Array<{ name: string; configured: boolean }> }>(await h.kernel.request('/api/media/providers'));
    assert.equal(list.providers.find((p) => p.name === 'openai')?.configured, true);
    await ok(await h.post('speech', { text: 'Hi.', provider: 'openai' }));
    assert.equal(sent(h, '/audio/speech').headers.authorization, undefined);
  });

  it('uses the configured default models and voice', async () => {
    await ok(await h.post('speech', { text: 'Hi.', provider: 'openai' }));
    assert.equal(sent(h, '/audio/speech').params.voice, 'echo');
    const body = await ok<{ model: string }>(await h.transcribe(sampleWav(1, 16000), 'audio/wav', { provider: 'openai' }));
    assert.equal(sent(h, '/audio/transcriptions').params.model, 'whisper-large-v3-turbo');
    assert.equal(body.model, 'whisper-large-v3-turbo');
  });

  it('audio OpenAI does not take (AAC) is sent as FLAC', { skip: !hasFfmpeg && 'ffmpeg is not installed (apt-get install ffmpeg)' }, async () => {
    await ok(await h.transcribe(toneFile('aac'), 'audio/aac', { provider: 'openai' }));
    const file = sent(h, '/audio/transcriptions').params.file as { name: string; content: Buffer };
    assert.equal(file.name, 'audio.flac');
    assert.equal(file.content.subarray(0, 4).toString('latin1'), 'fLaC');
  });
});

import { it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { MediaDriverKit, MediaError, VideoPoll } from '@talon/media';
import { mediaConformance, sampleWav, startMinimaxFake, type MediaHarness, type MinimaxFake } from '@talon/testing';
import { minimaxDriver } from '../driver.ts';

let fake: MinimaxFake;
const signal = () => AbortSignal.timeout(10_000);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

/** The driver on the running kernel's kit: the catalogue's key and [provider_urls] base, the net module's downloads. */
const kitOf = (h: MediaHarness) => h.kernel.kernel.services.view<MediaDriverKit>('media.kit');
const driverOf = (h: MediaHarness) => minimaxDriver(kitOf(h));

async function rejection(promise: Promise<unknown>): Promise<MediaError> {
  try {
    await promise;
  } catch (err) {
    assert.equal((err as Error).name, 'MediaError', String(err));
    return err as MediaError;
  }
  assert.fail('expected a MediaError');
}

async function settle(poll: () => Promise<VideoPoll>): Promise<VideoPoll> {
  for (let i = 0; i < 10; i++) {
    const state = await poll();
    if (state.state !== 'processing') return state;
  }
  assert.fail('the task never finished');
}

const lastBody = () => fake.requests.at(-1)!.body;
/** The conversion case needs ffmpeg (the kit's convert). */
const hasFfmpeg = (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && existsSync(path.join(dir, 'ffmpeg')));

mediaConformance(
  {
    name: 'media-minimax',
    only: ['media-minimax'],
    provider: 'minimax',
    env: { MINIMAX_API_KEY: 'test-key' },
    capabilities: ['ImageGeneration', 'TextToSpeech', 'VideoGeneration', 'MusicGeneration', 'Transcription'],
    fake: async () => (fake = await startMinimaxFake({ key: 'test-key' })),
    config: (url) => `[provider_urls]\nminimax = "${url}/v1"`,
  },
  (harness) => {
    it('asks image-01 for base64 images with a bearer key; an exact size as width and height, another as the nearest ratio', async () => {
      const driver = driverOf(harness());
      const result = await driver.generateImage!({ prompt: 'a fox', width: 1024, height: 768, count: 2, signal: signal() });
      assert.equal(result.images.length, 2);
      assert.deepEqual(result.images[0].subarray(0, 4), PNG);
      const sent = fake.requests.at(-1)!;
      assert.equal(sent.path, '/v1/image_generation');
      assert.equal(sent.headers.authorization, 'Bearer test-key');
      assert.deepEqual(sent.body, { model: 'image-01', prompt: 'a fox', n: 2, response_format: 'base64', prompt_optimizer: false, width: 1024, height: 768 });
      await driver.generateImage!({ prompt: 'a fox', width: 1000, height: 562, count: 1, signal: signal() });
      assert.equal(lastBody().aspect_ratio, '16:9');
      assert.equal(lastBody().width, undefined);
    });

    it('downloads image URLs from the CDN without the key', async () => {
      fake.forceImageUrls = true;
      try {
        const result = await driverOf(harness()).generateImage!({ prompt: 'a fox', count: 2, signal: signal() });
        assert.equal(result.images.length, 2);
        const fetched = fake.downloads.slice(-2);
        assert.equal(fetched.length, 2);
        for (const d of fetched) assert.equal(d.authorization, undefined);
      } finally {
        fake.forceImageUrls = false;
      }
    });

    it('reads base_resp on an HTTP 200: rate limits 429, sensitive content 400 with the reason, a bad key 422, others 502', async () => {
      const expect = [
        [1002, 'rate limit exceeded(RPM)', 429],
        [1039, 'token limit', 429],
        [1026, 'input new_sensitive', 400],
        [1027, 'output new_sensitive', 400],
        [1004, 'login fail', 422],
        [2049, 'invalid api key', 422],
        [1000, 'unknown error', 502],
        [1013, 'internal service error', 502],
      ] as const;
      for (const [code, message, status] of expect) {
        fake.envelopeNext(code, message);
        const response = await harness().post('image', { prompt: 'a fox', provider: 'minimax' });
        const body = (await response.json()) as { error: string };
        assert.equal(response.status, status, `${code}: ${body.error}`);
      }
      fake.envelopeNext(1026, 'input new_sensitive');
      const err = await rejection(driverOf(harness()).generateImage!({ prompt: 'a fox', count: 1, signal: signal() }));
      assert.equal(err.kind, 'refused');
      assert.match(err.message, /input new_sensitive \(1026\)/);
      fake.envelopeNext(2049, 'invalid api key');
      const key = await rejection(driverOf(harness()).generateImage!({ prompt: 'a fox', count: 1, signal: signal() }));
      assert.equal(key.kind, 'not_configured');
      assert.match(key.message, /MINIMAX_API_KEY/);
    });

    it('synthesizes with t2a_v2: hex audio decoded, speed within 0.5–2, a format MiniMax lacks made as mp3, the language boosted', async () => {
      const result = await driverOf(harness()).synthesize!({
        text: 'Bonjour',
        voice: 'French_Male',
        speed: 4,
        format: 'opus',
        language: 'fr-FR',
        signal: signal(),
      });
      assert.equal(result.model, 'speech-2.8-hd');
      assert.equal(result.audio.subarray(0, 3).toString('latin1'), 'ID3');
      assert.deepEqual(lastBody(), {
        model: 'speech-2.8-hd',
        text: 'Bonjour',
        stream: false,
        voice_setting: { voice_id: 'French_Male', speed: 2, vol: 1, pitch: 0 },
        audio_setting: { sample_rate: 32000, bitrate: 128000, format: 'mp3', channel: 1 },
        output_format: 'hex',
        language_boost: 'French',
      });
      const wav = await driverOf(harness()).synthesize!({ text: 'Hi', format: 'wav', signal: signal() });
      assert.deepEqual(wav.audio, sampleWav(1, 32000));
      assert.equal((lastBody().voice_setting as { voice_id: string }).voice_id, 'English_Graceful_Lady');
    });

    it('makes music: instrumental from a style, a song with lyrics, lyrics written by MiniMax when none are given', async () => {
      const driver = driverOf(harness());
      const made = await driver.generateMusic!({ prompt: 'calm piano', instrumental: true, signal: signal() });
      assert.ok(made.audio.length > 0);
      assert.deepEqual(lastBody(), {
        model: 'music-2.6',
        prompt: 'calm piano',
        is_instrumental: true,
        audio_setting: { sample_rate: 44100, bitrate: 256000, format: 'mp3' },
        output_format: 'hex',
      });
      await driver.generateMusic!({ lyrics: '[verse]\nla la', instrumental: false, format: 'wav', signal: signal() });
      assert.deepEqual(lastBody().lyrics, '[verse]\nla la');
      assert.equal((lastBody().audio_setting as { format: string }).format, 'wav');
      await driver.generateMusic!({ prompt: 'a summer song', instrumental: false, signal: signal() });
      assert.equal(lastBody().lyrics_optimizer, true);
      const before = fake.requests.length;
      const err = await rejection(driver.generateMusic!({ lyrics: 'la', instrumental: true, signal: signal() }));
      assert.equal(err.kind, 'refused');
      assert.equal(fake.requests.length, before, 'refused before a request');
    });

    it('runs a video task: submit, query until Success, retrieve the file, download it without the key', async () => {
      const driver = driverOf(harness());
      const submitted = await driver.submitVideo!({ prompt: 'waves', durationSecs: 1, signal: signal() });
      assert.deepEqual(lastBody(), { model: 'MiniMax-Hailuo-2.3', prompt: 'waves', duration: 6 });
      assert.match(submitted.providerTaskId, /^MiniMax-Hailuo-2\.3:\d+$/);
      assert.deepEqual(await driver.pollVideo!(submitted.providerTaskId, signal()), { state: 'processing' });
      const done = await settle(() => driver.pollVideo!(submitted.providerTaskId, signal()));
      assert.equal(done.state, 'completed');
      if (done.state !== 'completed') return;
      assert.equal(done.model, 'MiniMax-Hailuo-2.3');
      assert.deepEqual([done.width, done.height], [160, 90]);
      assert.equal(done.video.subarray(4, 8).toString('latin1'), 'ftyp');
      assert.equal(fake.downloads.at(-1)!.authorization, undefined);
      await driver.submitVideo!({ prompt: 'waves', durationSecs: 7, signal: signal() });
      assert.equal(lastBody().duration, 10);
    });

    it('percent-encodes task and file ids: an id with & or # adds no parameter to a request carrying the key', async () => {
      const driver = driverOf(harness());
      fake.nextTaskId = 'task&file_id=x#frag';
      fake.nextFileId = 'file&task_id=y#z';
      const { providerTaskId } = await driver.submitVideo!({ prompt: 'waves', signal: signal() });
      assert.equal(providerTaskId, 'MiniMax-Hailuo-2.3:task&file_id=x#frag');
      const done = await settle(() => driver.pollVideo!(providerTaskId, signal()));
      assert.equal(done.state, 'completed');
      const query = fake.requests.filter((r) => r.path === '/v1/query/video_generation').at(-1)!;
      assert.equal(query.rawUrl, '/v1/query/video_generation?task_id=task%26file_id%3Dx%23frag');
      assert.deepEqual([...query.query.keys()], ['task_id']);
      const retrieve = fake.requests.filter((r) => r.path === '/v1/files/retrieve').at(-1)!;
      assert.equal(retrieve.query.get('file_id'), 'file&task_id=y#z');
      assert.deepEqual([...retrieve.query.keys()], ['file_id']);
    });

    it('ends a task MiniMax reports as Fail, and one whose id it no longer knows', async () => {
      const driver = driverOf(harness());
      const { providerTaskId } = await driver.submitVideo!({ prompt: 'make it explode', signal: signal() });
      assert.deepEqual(await settle(() => driver.pollVideo!(providerTaskId, signal())), { state: 'failed', error: 'the video task failed' });
      const unknown = await driver.pollVideo!('MiniMax-Hailuo-2.3:no-such-task', signal());
      assert.equal(unknown.state, 'failed');
      assert.match(unknown.state === 'failed' ? unknown.error : '', /invalid params, task_id/);
    });

    it('transcribes with asr-1.0 as multipart, the language as a header', async () => {
      const result = await driverOf(harness()).transcribe!({ audio: sampleWav(1, 16000), contentType: 'audio/wav', language: 'fr', signal: signal() });
      assert.deepEqual(result, { text: 'bonjour du faux transcripteur', model: 'asr-1.0' });
      const sent = fake.requests.at(-1)!;
      assert.equal(sent.path, '/v1/speech_to_text');
      assert.equal(sent.headers.language, 'fr');
      assert.equal(sent.body.model, 'asr-1.0');
      assert.equal(sent.body.response_format, 'json');
      const file = sent.body.file as { name: string; type: string; content: Buffer };
      assert.equal(file.name, 'audio.wav');
      assert.deepEqual(file.content, sampleWav(1, 16000));
    });

    it(
      'converts audio MiniMax cannot read (WebM) to mp3 before sending it',
      { skip: hasFfmpeg ? false : 'ffmpeg is not installed (apt-get install ffmpeg)' },
      async () => {
        const webm = await kitOf(harness()).convert(sampleWav(1, 16000), 'opus');
        // An Ogg/Opus file labelled as WebM stands for a type outside MiniMax's list.
        await driverOf(harness()).transcribe!({ audio: webm, contentType: 'audio/webm', signal: signal() });
        const file = fake.requests.at(-1)!.body.file as { name: string; type: string; content: Buffer };
        assert.equal(file.name, 'audio.mp3');
        assert.equal(file.type, 'audio/mpeg');
        assert.notDeepEqual(file.content.subarray(0, 4).toString('latin1'), 'OggS');
      },
    );
  },
);

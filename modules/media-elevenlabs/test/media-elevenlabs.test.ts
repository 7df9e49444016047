import { it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ELEVENLABS_FAKE_KEY,
  mediaConformance,
  sampleWav,
  startElevenlabsFake,
  type ElevenlabsFake,
  type FakeMediaRequest,
  type MediaHarness,
} from '@talon/testing';

async function answer<T = Record<string, unknown>>(response: Response, status = 200): Promise<T> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  return JSON.parse(text) as T;
}

const fakeOf = (h: MediaHarness) => h.fake as ElevenlabsFake;

function sent(h: MediaHarness, pattern: RegExp): FakeMediaRequest {
  const found = fakeOf(h)
    .requests.filter((r) => pattern.test(r.path))
    .at(-1);
  assert.ok(found, `a request to ${String(pattern)}`);
  return found;
}

mediaConformance(
  {
    name: 'media-elevenlabs',
    only: ['media-elevenlabs', 'error-envelope'],
    provider: 'elevenlabs',
    env: { ELEVENLABS_API_KEY: ELEVENLABS_FAKE_KEY },
    capabilities: ['TextToSpeech', 'Transcription'],
    fake: () => startElevenlabsFake(),
    config: (url) => `[provider_urls]\nelevenlabs = "${url}/v1"`,
  },
  (harness) => {
    it('speech: Rachel, eleven_multilingual_v2 and mp3_44100_128 by default, the key as xi-api-key', async () => {
      const h = harness();
      const body = await answer<{ format: string; model: string }>(await h.post('speech', { text: 'Hello there.', provider: 'elevenlabs' }));
      const request = sent(h, /^\/v1\/text-to-speech\//);
      assert.equal(request.path, '/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM');
      assert.deepEqual(request.query, { output_format: 'mp3_44100_128' });
      assert.equal(request.headers['xi-api-key'], ELEVENLABS_FAKE_KEY);
      assert.equal(request.headers.authorization, undefined);
      assert.deepEqual(request.params, { output_format: 'mp3_44100_128', text: 'Hello there.', model_id: 'eleven_multilingual_v2' });
      assert.deepEqual([body.format, body.model], ['mp3', 'eleven_multilingual_v2']);
    });

    it('wav is asked as pcm_24000 and wrapped in a WAV header here; ogg as opus_48000_64', async () => {
      const h = harness();
      const wav = await answer<{ format: string; sample_rate: number; duration_ms: number; url: string }>(
        await h.post('speech', { text: 'Hi.', provider: 'elevenlabs', format: 'wav' }),
      );
      assert.equal(sent(h, /^\/v1\/text-to-speech\//).query.output_format, 'pcm_24000');
      assert.deepEqual([wav.format, wav.sample_rate, wav.duration_ms], ['wav', 24000, 1000]);
      const { bytes } = await h.file(wav.url);
      assert.equal(bytes.subarray(0, 4).toString('latin1'), 'RIFF');
      assert.equal(bytes.readUInt32LE(40), 48000, 'the data chunk holds 1 s of 16-bit samples');
      const ogg = await answer<{ format: string; sample_rate: number }>(await h.post('speech', { text: 'Hi.', provider: 'elevenlabs', format: 'ogg' }));
      assert.equal(sent(h, /^\/v1\/text-to-speech\//).query.output_format, 'opus_48000_64');
      assert.equal(ogg.sample_rate, 48000);
    });

    it('the voice, model, speed and language asked are sent (language_code only to models that take it)', async () => {
      const h = harness();
      await answer(await h.post('speech', { text: 'Hi.', provider: 'elevenlabs', voice: 'JBFqnCBsd6RMkjVDRZzb', speed: 1.1, language: 'de-DE' }));
      let request = sent(h, /^\/v1\/text-to-speech\//);
      assert.equal(request.path, '/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb');
      assert.deepEqual(request.params.voice_settings, { speed: 1.1 });
      assert.equal(request.params.language_code, undefined, 'eleven_multilingual_v2 takes no language_code');
      await answer(await h.post('speech', { text: 'Hi.', provider: 'elevenlabs', model: 'eleven_flash_v2_5', language: 'de-DE' }));
      request = sent(h, /^\/v1\/text-to-speech\//);
      assert.deepEqual([request.params.model_id, request.params.language_code], ['eleven_flash_v2_5', 'de']);
    });

    it('a voice that is no voice id, or a speed outside 0.7–1.2, is a 400 naming the field, and nothing is sent', async () => {
      const h = harness();
      const before = fakeOf(h).requests.length;
      const voice = await answer<{ error: string }>(await h.post('speech', { text: 'Hi.', provider: 'elevenlabs', voice: '../../voices' }), 400);
      assert.match(voice.error, /^voice: /);
      const speed = await answer<{ error: string }>(await h.post('speech', { text: 'Hi.', provider: 'elevenlabs', speed: 2 }), 400);
      assert.match(speed.error, /^speed: /);
      assert.equal(fakeOf(h).requests.length, before);
    });

    it("an unknown voice id is ElevenLabs' refusal (voice_not_found), a 400 with its message", async () => {
      const body = await answer<{ error: string }>(await harness().post('speech', { text: 'Hi.', provider: 'elevenlabs', voice: 'AAAAAAAAAAAAAAAAAAAA' }), 400);
      assert.match(body.error, /A voice with the voice_id AAAAAAAAAAAAAAAAAAAA was not found/);
    });

    it('transcription: multipart with file, model_id scribe_v1, language_code, no audio-event tags', async () => {
      const h = harness();
      const body = await answer<{ text: string; model: string }>(
        await h.transcribe(sampleWav(1, 16000), 'audio/wav', { provider: 'elevenlabs', language: 'en-GB' }),
      );
      const request = sent(h, /^\/v1\/speech-to-text$/);
      assert.match(String(request.headers['content-type']), /^multipart\/form-data; boundary=/);
      assert.equal(request.headers['xi-api-key'], ELEVENLABS_FAKE_KEY);
      const file = request.params.file as { name: string; type: string; content: Buffer };
      assert.deepEqual([file.name, file.type], ['audio.wav', 'audio/wav']);
      assert.deepEqual(file.content, sampleWav(1, 16000));
      assert.deepEqual([request.params.model_id, request.params.language_code, request.params.tag_audio_events], ['scribe_v1', 'en', 'false']);
      assert.deepEqual([body.text, body.model], ['Hello from the fake transcriber.', 'scribe_v1']);
    });
  },
);

/** The ElevenLabs fake's wire behaviour, with plain fetch: what a driver may rely on it to do like ElevenLabs. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MEDIA_FAKE_REFUSAL } from '../../testing-kit/src/media-conformance.ts';
import { ELEVENLABS_FAKE_KEY, startElevenlabsFake, type ElevenlabsFake } from './elevenlabs-server.ts';

let fake: ElevenlabsFake;
before(async () => void (fake = await startElevenlabsFake()));
after(() => fake.stop());

const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const tts = (voice: string, format: string, body: unknown, key: string | null = ELEVENLABS_FAKE_KEY) =>
  fetch(`${fake.url}/v1/text-to-speech/${voice}?output_format=${format}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'xi-api-key': key } : {}) },
    body: JSON.stringify(body),
  });
const detail = async (response: Response) => ((await response.json()) as { detail: { status: string; message: string } }).detail;

test('401 without xi-api-key or with another key', async () => {
  assert.equal((await detail(await tts(RACHEL, 'mp3_44100_128', { text: 'hi' }, null))).status, 'needs_authorization');
  const wrong = await tts(RACHEL, 'mp3_44100_128', { text: 'hi' }, 'other');
  assert.equal(wrong.status, 401);
  assert.equal((await detail(wrong)).status, 'invalid_api_key');
});

test('speech answers the output format: mp3 frames, raw PCM of the named rate, Ogg/Opus; unknown voices 404', async () => {
  const bytes = async (format: string) => Buffer.from(await (await tts(RACHEL, format, { text: 'hi', model_id: 'eleven_multilingual_v2' })).arrayBuffer());
  assert.equal((await bytes('mp3_44100_128')).subarray(0, 3).toString('latin1'), 'ID3', 'an MP3 file with its (empty) ID3v2 tag');
  assert.equal((await bytes('pcm_16000')).length, 32000);
  assert.equal((await bytes('opus_48000_64')).subarray(0, 4).toString('latin1'), 'OggS');
  assert.equal((await tts(RACHEL, 'wav_44100', { text: 'hi' })).status, 422);
  const missing = await tts('AAAAAAAAAAAAAAAAAAAA', 'mp3_44100_128', { text: 'hi' });
  assert.equal(missing.status, 404);
  assert.equal((await detail(missing)).status, 'voice_not_found');
});

test('speech-to-text: model_id is required (422), the answer carries text and words', async () => {
  const send = (fields: Record<string, string>) => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array([1, 2, 3])], { type: 'audio/wav' }), 'a.wav');
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    return fetch(`${fake.url}/v1/speech-to-text`, { method: 'POST', headers: { 'xi-api-key': ELEVENLABS_FAKE_KEY }, body: form });
  };
  assert.equal((await send({})).status, 422);
  const body = (await (await send({ model_id: 'scribe_v1', language_code: 'en' })).json()) as { text: string; language_code: string; words: unknown[] };
  assert.deepEqual([body.text, body.language_code, body.words.length], [fake.transcript, 'en', fake.transcript.split(' ').length]);
});

test('failNext: a refusal in its detail envelope, an outage, a 429 with Retry-After, each once', async () => {
  fake.failNext('refuse');
  const refused = await tts(RACHEL, 'mp3_44100_128', { text: 'hi' });
  assert.equal(refused.status, 400);
  assert.ok((await detail(refused)).message.includes(MEDIA_FAKE_REFUSAL));
  fake.failNext('outage');
  assert.equal((await tts(RACHEL, 'mp3_44100_128', { text: 'hi' })).status, 503);
  fake.failNext('rate_limit');
  const limited = await tts(RACHEL, 'mp3_44100_128', { text: 'hi' });
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '7');
  assert.equal((await tts(RACHEL, 'mp3_44100_128', { text: 'hi' })).status, 200);
});

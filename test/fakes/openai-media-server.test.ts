/** The OpenAI media fake's wire behaviour, with plain fetch: what a driver may rely on it to do like OpenAI. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MEDIA_FAKE_REFUSAL } from '../../testing-kit/src/media-conformance.ts';
import { OPENAI_FAKE_KEY, startOpenaiMediaFake, type OpenaiMediaFake } from './openai-media-server.ts';

let fake: OpenaiMediaFake;
before(async () => void (fake = await startOpenaiMediaFake()));
after(() => fake.stop());

const post = (path: string, body: unknown, key: string | null = OPENAI_FAKE_KEY) =>
  fetch(`${fake.url}/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });

const error = async (response: Response) => ((await response.json()) as { error: { message: string; code: string | null; param: string | null } }).error;

test('401 without the key or with another one', async () => {
  assert.equal((await post('/audio/speech', {}, null)).status, 401);
  const wrong = await post('/audio/speech', {}, 'sk-other');
  assert.equal(wrong.status, 401);
  assert.equal((await error(wrong)).code, 'invalid_api_key');
});

test('gpt-image models refuse response_format; dall-e answers a URL unless asked for b64_json', async () => {
  const refused = await post('/images/generations', { model: 'gpt-image-1', prompt: 'x', response_format: 'b64_json' });
  assert.equal(refused.status, 400);
  assert.deepEqual(await error(refused), {
    message: "Unknown parameter: 'response_format'.",
    type: 'invalid_request_error',
    param: 'response_format',
    code: 'unknown_parameter',
  });
  const url = (await (await post('/images/generations', { model: 'dall-e-2', prompt: 'x' })).json()) as { data: Array<{ url: string }> };
  const image = await fetch(url.data[0].url);
  assert.equal(image.headers.get('content-type'), 'image/png');
  const b64 = (await (await post('/images/generations', { model: 'dall-e-2', prompt: 'x', response_format: 'b64_json' })).json()) as {
    data: Array<{ b64_json: string }>;
  };
  assert.equal(Buffer.from(b64.data[0].b64_json, 'base64').subarray(1, 4).toString('latin1'), 'PNG');
  assert.equal((await post('/images/generations', { model: 'dall-e-3', prompt: 'x', n: 2 })).status, 400);
});

test('speech answers the asked format: mp3 frames, Ogg for opus, RIFF for wav', async () => {
  const bytes = async (format: string) =>
    Buffer.from(await (await post('/audio/speech', { model: 'tts-1', input: 'hi', voice: 'alloy', response_format: format })).arrayBuffer());
  assert.equal((await bytes('mp3')).subarray(0, 3).toString('latin1'), 'ID3', 'an MP3 file with its (empty) ID3v2 tag');
  assert.equal((await bytes('opus')).subarray(0, 4).toString('latin1'), 'OggS');
  assert.equal((await bytes('wav')).subarray(0, 4).toString('latin1'), 'RIFF');
  assert.equal((await bytes('flac')).subarray(0, 4).toString('latin1'), 'fLaC');
});

test('transcriptions need a file with a supported extension and an ISO-639-1 language', async () => {
  const form = (name: string, language?: string) => {
    const f = new FormData();
    f.append('file', new Blob([new Uint8Array([1, 2, 3])]), name);
    f.append('model', 'whisper-1');
    if (language) f.append('language', language);
    return f;
  };
  const send = (body: FormData) =>
    fetch(`${fake.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${OPENAI_FAKE_KEY}` }, body });
  assert.deepEqual(await (await send(form('a.wav', 'en'))).json(), { text: fake.transcript });
  assert.equal((await send(form('a.aac'))).status, 400);
  assert.equal((await error(await send(form('a.wav', 'en-US')))).param, 'language');
});

test('failNext: a content-policy refusal, an outage, a 429 with Retry-After, each once', async () => {
  fake.failNext('refuse');
  const refused = await post('/audio/speech', {});
  assert.equal(refused.status, 400);
  const reason = await error(refused);
  assert.equal(reason.code, 'content_policy_violation');
  assert.ok(reason.message.includes(MEDIA_FAKE_REFUSAL));
  fake.failNext('outage');
  assert.equal((await post('/audio/speech', {})).status, 503);
  fake.failNext('rate_limit');
  const limited = await post('/audio/speech', {});
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '7');
  assert.equal((await post('/audio/speech', { model: 'tts-1', input: 'hi', voice: 'alloy' })).status, 200);
});

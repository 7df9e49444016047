/** The MiniMax fake's wire behaviour, with plain fetch: what a driver may rely on it to do like MiniMax. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MEDIA_FAKE_REFUSAL } from '../../testing-kit/src/media-conformance.ts';
import { startMinimaxFake, type MinimaxFake } from './minimax-server.ts';

let fake: MinimaxFake;
before(async () => void (fake = await startMinimaxFake({ key: 'k1', videoPolls: 2 })));
after(() => fake.stop());

type Answer = Record<string, unknown> & { base_resp: { status_code: number; status_msg: string } };

async function call(path: string, body?: unknown, key: string | null = 'k1'): Promise<Answer> {
  const response = await fetch(`${fake.url}/v1${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.equal(response.status, 200, 'MiniMax answers its errors in base_resp on an HTTP 200');
  return (await response.json()) as Answer;
}

test('the envelope on HTTP 200: 1004 without a key, 2049 for another, 2013 for bad parameters, 1026 for a sensitive prompt', async () => {
  assert.equal((await call('/t2a_v2', {}, null)).base_resp.status_code, 1004);
  assert.equal((await call('/t2a_v2', {}, 'other')).base_resp.status_code, 2049);
  assert.equal((await call('/image_generation', { model: 'image-01', prompt: 'x', n: 10 })).base_resp.status_code, 2013);
  assert.equal((await call('/image_generation', { model: 'image-01', prompt: 'forbidden' })).base_resp.status_code, 1026);
});

test('speech and music answer hex audio in the asked format', async () => {
  const speech = await call('/t2a_v2', {
    model: 'speech-2.8-hd',
    text: 'hi',
    voice_setting: { voice_id: 'v' },
    audio_setting: { format: 'mp3' },
    output_format: 'hex',
  });
  assert.equal(speech.base_resp.status_code, 0);
  assert.equal(
    Buffer.from((speech.data as { audio: string }).audio, 'hex')
      .subarray(0, 3)
      .toString('latin1'),
    'ID3',
  );
  const music = await call('/music_generation', {
    model: 'music-2.6',
    prompt: 'calm',
    is_instrumental: true,
    audio_setting: { format: 'wav' },
    output_format: 'hex',
  });
  assert.equal(
    Buffer.from((music.data as { audio: string }).audio, 'hex')
      .subarray(0, 4)
      .toString('latin1'),
    'RIFF',
  );
  assert.equal((await call('/music_generation', { model: 'music-2.6', prompt: 'calm' })).base_resp.status_code, 2013, 'lyrics or a flag needed');
});

test('video: task_id, Preparing and Queueing, then Success with a file_id whose download_url needs no key', async () => {
  fake.nextTaskId = 'a&b#c';
  const { task_id } = await call('/video_generation', { model: 'MiniMax-Hailuo-2.3', prompt: 'waves', duration: 6 });
  assert.equal(task_id, 'a&b#c');
  const query = () => call(`/query/video_generation?${new URLSearchParams({ task_id: 'a&b#c' })}`);
  assert.deepEqual([(await query()).status, (await query()).status], ['Preparing', 'Queueing']);
  const done = await query();
  assert.equal(done.status, 'Success');
  const file = await call(`/files/retrieve?${new URLSearchParams({ file_id: String(done.file_id) })}`);
  const url = (file.file as { download_url: string }).download_url;
  const video = await fetch(url);
  assert.equal(video.headers.get('content-type'), 'video/mp4');
  assert.equal(fake.downloads.at(-1)!.authorization, undefined);
  assert.equal((await call('/video_generation', { model: 'MiniMax-Hailuo-2.3', prompt: 'w', duration: 5 })).base_resp.status_code, 2013);
});

test('speech_to_text reads multipart asr-1.0, refuses WebM', async () => {
  const form = (bytes: Uint8Array) => {
    const f = new FormData();
    f.set('model', 'asr-1.0');
    f.set('file', new Blob([new Uint8Array(bytes)]), 'a.bin');
    return f;
  };
  const post = async (bytes: Uint8Array) =>
    (await (await fetch(`${fake.url}/v1/speech_to_text`, { method: 'POST', headers: { authorization: 'Bearer k1' }, body: form(bytes) })).json()) as Answer;
  assert.equal((await post(Buffer.from('RIFF....WAVEfmt '))).text, 'hello from the fake transcriber');
  assert.equal((await post(new Uint8Array([0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0]))).base_resp.status_code, 2013);
});

test('failNext answers the next POST with the envelope: 1026 with the refusal, 1000, 1002', async () => {
  const post = () => call('/image_generation', { model: 'image-01', prompt: 'x', response_format: 'base64' });
  fake.failNext('refuse');
  assert.equal((await call('/query/video_generation?task_id=none')).base_resp.status_code, 2013, 'a GET is not the one');
  const refused = await post();
  assert.equal(refused.base_resp.status_code, 1026);
  assert.match(refused.base_resp.status_msg, new RegExp(MEDIA_FAKE_REFUSAL));
  fake.failNext('outage');
  assert.equal((await post()).base_resp.status_code, 1000);
  fake.failNext('rate_limit');
  assert.equal((await post()).base_resp.status_code, 1002);
  assert.equal((await post()).base_resp.status_code, 0);
});

/**
 * The media routes through the test drivers: success shapes, measured audio, format conversion, provider choice,
 * validation naming the field, the transcription body forms and caps, refusals before the provider (budgets),
 * time bounds, refused result files, provider-returned URLs under the SSRF rules, and media.generated.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventChannel, samplePng, sampleWav, setConfig, waitFor } from '@talon/testing';
import { mediaEvents } from '../api.ts';
import { which } from '../services/audio/which.ts';
import { FIXTURE_KEY, expectJson, expectRefusal, lastCall, startMediaTest, type MediaTestKernel } from './helpers.ts';

type Audio = { url: string; file_id: string; format: string; provider: string; model: string; duration_ms: number; sample_rate: number };
const ffmpeg = which('ffmpeg') ? false : 'ffmpeg is not installed (apt-get install ffmpeg)';

/** The process is still there (signal 0 checks without sending anything). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('media routes', () => {
  let h: MediaTestKernel;
  before(async () => {
    h = await startMediaTest({ media: 'max_transcribe_bytes = 100000\nspeech_timeout_secs = 1\nmax_result_bytes = 65000' });
  });
  after(() => h?.stop());

  it('image: every image is a stored PNG served with nosniff; revised_prompt and model from the provider; metered per image', async () => {
    const body = await expectJson<{ images: Array<{ url: string; file_id: string }>; model: string; provider: string; revised_prompt: string | null }>(
      await h.post('image', { prompt: 'two foxes', provider: 'fixture', count: 2 }),
      200,
    );
    assert.equal(body.images.length, 2);
    assert.deepEqual([body.model, body.provider, body.revised_prompt], ['fixture-image', 'fixture', 'a revised prompt']);
    for (const image of body.images) {
      assert.equal(image.url, `/api/uploads/${image.file_id}`);
      const { response, bytes } = await h.file(image.url);
      // The fixture labels its PNGs application/octet-stream: the type is the bytes'.
      assert.equal(response.headers.get('content-type'), 'image/png');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.deepEqual([...bytes.subarray(1, 4)], [...Buffer.from('PNG')]);
    }
    const record = lastCall(h, 'image');
    assert.deepEqual([record.units, record.unit, record.model, record.ok], [2, 'images', 'fixture-image', true]);
  });

  it('speech: a WAV the provider labels audio/mpeg is stored and reported as WAV, its duration and rate measured', async () => {
    const body = await expectJson<Audio>(await h.post('speech', { text: 'Hello there.', provider: 'fixture' }), 200);
    assert.deepEqual([body.format, body.duration_ms, body.sample_rate, body.model], ['wav', 1000, 22050, 'fixture-tts']);
    const { response } = await h.file(body.url);
    assert.equal(response.headers.get('content-type'), 'audio/wav');
    const record = lastCall(h, 'speech');
    assert.deepEqual([record.units, record.unit], [12, 'characters']);
  });

  it('speech: the format asked for is converted to and measured again', { skip: ffmpeg }, async () => {
    const body = await expectJson<Audio>(await h.post('speech', { text: 'Hello there.', provider: 'fixture', format: 'mp3' }), 200);
    assert.equal(body.format, 'mp3');
    assert.ok(Math.abs(body.duration_ms - 1000) < 80, `measured duration of the mp3: ${body.duration_ms}`);
    assert.equal(body.sample_rate, 22050);
    assert.equal((await h.file(body.url)).response.headers.get('content-type'), 'audio/mpeg');
  });

  it("speech: format 'ogg' is answered as ogg (Ogg/Opus), not as the codec's name", { skip: ffmpeg }, async () => {
    const body = await expectJson<Audio>(await h.post('speech', { text: 'Hello there.', provider: 'fixture', format: 'ogg' }), 200);
    assert.deepEqual([body.format, body.sample_rate], ['ogg', 48000]);
    assert.match((await h.file(body.url)).response.headers.get('content-type') ?? '', /^audio\/ogg\b/);
    const opus = await expectJson<Audio>(await h.post('speech', { text: 'Hello there.', provider: 'fixture', format: 'opus' }), 200);
    assert.equal(opus.format, 'opus');
  });

  it("audio the provider made that cannot be converted is the provider's failure: 502, metered with the characters it billed", { skip: ffmpeg }, async () => {
    const hollowMp4 = Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex');
    for (const [what, bytes] of [
      ['an MP4 without its movie (ffmpeg fails)', hollowMp4],
      ['bytes of no known format (never given to ffmpeg)', Buffer.from('not audio at all '.repeat(40))],
    ] as const) {
      h.fixture.speechBytes = () => bytes;
      try {
        await expectRefusal(
          await h.post('speech', { text: 'unplayable', provider: 'fixture', format: 'mp3' }),
          502,
          /'fixture' made could not be converted to mp3/,
        );
      } finally {
        h.fixture.speechBytes = undefined;
      }
      const record = lastCall(h, 'speech');
      assert.deepEqual([record.ok, record.units, record.model], [false, 10, 'fixture-tts'], what);
    }
  });

  it('a failed call is metered with the model asked for, else the provider name, never an empty model', async () => {
    h.fixture.failNext('outage');
    await expectRefusal(await h.post('speech', { text: 'down', provider: 'fixture', model: 'tts-asked' }), 502, /fixture/);
    assert.deepEqual([lastCall(h, 'speech').model, lastCall(h, 'speech').units], ['tts-asked', 0]);
    h.fixture.failNext('refuse');
    await expectRefusal(await h.post('image', { prompt: 'fox', provider: 'fixture' }), 400, /content filter/);
    assert.deepEqual([lastCall(h, 'image').model, lastCall(h, 'image').ok], ['fixture', false]);
    h.fixture.failNext('refuse');
    await expectRefusal(await h.post('video', { prompt: 'waves', provider: 'fixture' }), 400, /content filter/);
    assert.deepEqual([lastCall(h, 'video').model, lastCall(h, 'video').ok], ['fixture', false]);
  });

  it('speech: without ffmpeg the audio is kept and its true format reported', async () => {
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const body = await expectJson<Audio>(await h.post('speech', { text: 'Hi.', provider: 'fixture', format: 'mp3' }), 200);
      assert.deepEqual([body.format, body.duration_ms, body.sample_rate], ['wav', 1000, 22050]);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('music: lyrics alone are enough; one song metered; neither prompt nor lyrics is a 400 naming both', async () => {
    const body = await expectJson<Audio>(await h.post('music', { lyrics: 'la la la', provider: 'fixture' }), 200);
    assert.deepEqual([body.format, body.duration_ms, body.sample_rate, body.model], ['wav', 2000, 16000, 'fixture-music']);
    const record = lastCall(h, 'music');
    assert.deepEqual([record.units, record.unit], [1, 'songs']);
    await expectRefusal(await h.post('music', { instrumental: true, provider: 'fixture' }), 400, /'prompt' or 'lyrics'/);
  });

  it('bad input is a 400 naming the field, before any provider is asked', async () => {
    const before = h.fixture.requests.length;
    const cases: Array<[string, unknown, RegExp]> = [
      ['image', { prompt: 'x'.repeat(4001) }, /prompt/],
      ['image', { prompt: '   ' }, /prompt/],
      ['image', { prompt: 'fox', count: 10 }, /count.*1 to 9/],
      ['image', { prompt: 'fox', count: 0 }, /count/],
      ['image', { prompt: 'fox', width: 10 }, /width/],
      ['image', { prompt: 'fox', height: 5000 }, /height/],
      ['image', { prompt: 'fox', sizes: 2 }, /sizes/],
      ['speech', { text: 'hi', speed: 5 }, /speed.*0\.25 to 4/],
      ['speech', { text: 'hi', format: 'wma' }, /format.*mp3/],
      ['speech', { text: 'x'.repeat(10001) }, /text/],
      ['speech', { text: 'hi', language: 'not a tag!' }, /language/],
      ['music', { prompt: 'x'.repeat(2001) }, /prompt/],
    ];
    for (const [kind, body, field] of cases) await expectRefusal(await h.post(kind, body), 400, field);
    assert.equal(h.fixture.requests.length, before);
  });

  it('an empty JSON body is no body: 400 naming the required field', async () => {
    for (const [kind, field] of [
      ['image', /'prompt'/],
      ['speech', /'text'/],
      ['music', /'prompt' or 'lyrics'/],
    ] as const) {
      const response = await h.kernel.request(`/api/media/${kind}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
      await expectRefusal(response, 400, field);
    }
  });

  it('providers: each driver with configured, its capabilities and what to set', async () => {
    const body = await expectJson<{ providers: Array<{ name: string; configured: boolean; capabilities: string[]; setup?: string }> }>(
      await h.kernel.request('/api/media/providers'),
      200,
    );
    const fixture = body.providers.find((p) => p.name === 'fixture')!;
    assert.deepEqual([fixture.configured, fixture.capabilities.length, fixture.setup], [true, 5, `set ${FIXTURE_KEY}`]);
    assert.deepEqual(
      body.providers.find((p) => p.name === 'fixture-free'),
      { name: 'fixture-free', configured: true, capabilities: ['TextToSpeech'] },
    );
  });

  it('choice: the keyed provider first; without its key the next one with the capability; none is a 422 naming the capability and the key', async () => {
    assert.equal((await expectJson<Audio>(await h.post('speech', { text: 'hi' }), 200)).provider, 'fixture');
    delete process.env[FIXTURE_KEY];
    try {
      assert.equal((await expectJson<Audio>(await h.post('speech', { text: 'hi' }), 200)).provider, 'fixture-free');
      const error = await expectRefusal(await h.post('image', { prompt: 'fox' }), 422, /ImageGeneration/);
      assert.match(error, new RegExp(FIXTURE_KEY));
      await expectRefusal(await h.post('image', { prompt: 'fox', provider: 'fixture' }), 422, new RegExp(`not configured.*${FIXTURE_KEY}`));
    } finally {
      process.env[FIXTURE_KEY] = 'fixture-key';
    }
    await expectRefusal(await h.post('image', { prompt: 'fox', provider: 'nobody' }), 400, /provider.*unknown media provider 'nobody'/);
    await expectRefusal(await h.post('image', { prompt: 'fox', provider: 'fixture-free' }), 400, /does not offer ImageGeneration/);
  });

  it('transcribe: a raw audio body or a multipart file, provider and language from the query or the fields', async () => {
    const wav = sampleWav(1, 16000);
    const raw = await expectJson<{ text: string; provider: string; model: string; duration_ms: number }>(
      await h.transcribe(wav, 'audio/wav', { provider: 'fixture', language: 'en' }),
      200,
    );
    assert.deepEqual(raw, { text: `heard ${wav.length} bytes of audio/wav`, provider: 'fixture', model: 'fixture-stt', duration_ms: 1000 });
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(wav)], { type: 'application/octet-stream' }), 'a.wav');
    form.append('provider', 'fixture');
    form.append('language', 'en-US');
    const multipart = await expectJson<{ text: string; duration_ms: number }>(
      await h.kernel.request('/api/media/transcribe', { method: 'POST', body: form }),
      200,
    );
    assert.deepEqual(multipart, raw);
    const record = lastCall(h, 'transcription');
    assert.deepEqual([record.units, record.unit], [1, 'seconds']);
  });

  it('transcribe: over the cap is 413, bytes that are not audio 415, a form without a file or a bad field 400', async () => {
    await expectRefusal(await h.transcribe(sampleWav(4, 16000), 'audio/wav', { provider: 'fixture' }), 413, /max_transcribe_bytes/);
    assert.equal((await h.transcribe(sampleWav(10, 16000), 'audio/wav', { provider: 'fixture' })).status, 413);
    await expectRefusal(await h.transcribe(samplePng(), 'audio/wav', { provider: 'fixture' }), 415, /not audio/);
    // A WAV whose header says a byte rate of 1: it would be metered as 3200 s. Refused, and nothing metered.
    const forged = sampleWav(0.1, 16000);
    forged.writeUInt32LE(1, 28);
    const calls = h.calls.length;
    await expectRefusal(await h.transcribe(forged, 'audio/wav', { provider: 'fixture' }), 415, /not audio.*found: unknown/);
    assert.equal(h.calls.length, calls);
    assert.equal((await h.transcribe(samplePng(), 'image/png')).status, 415);
    await expectRefusal(await h.kernel.request('/api/media/transcribe', { method: 'POST', json: { audio: 'x' } }), 415, /file/);
    await expectRefusal(await h.transcribe(Buffer.alloc(0), 'audio/wav'), 400, /file/);
    const empty = new FormData();
    empty.append('provider', 'fixture');
    await expectRefusal(await h.kernel.request('/api/media/transcribe', { method: 'POST', body: empty }), 400, /'file'/);
    const bad = new FormData();
    bad.append('file', new Blob([new Uint8Array(sampleWav(1))]), 'a.wav');
    bad.append('language', 'not a tag!');
    await expectRefusal(await h.kernel.request('/api/media/transcribe', { method: 'POST', body: bad }), 400, /'language'/);
    await expectRefusal(await h.transcribe(sampleWav(1), 'audio/wav', { language: 'not a tag!' }), 400, /language/);
  });

  it('[media] max_transcribe_bytes is read on each request: raised, a larger body passes; lowered, it is 413 naming the key', async () => {
    const big = sampleWav(10, 16000); // 320 KB: over the cap the route was registered with (100000)
    try {
      await setConfig(h.kernel, 'media.max_transcribe_bytes', 400_000);
      assert.equal((await expectJson<{ duration_ms: number }>(await h.transcribe(big, 'audio/wav', { provider: 'fixture' }), 200)).duration_ms, 10_000);
      await setConfig(h.kernel, 'media.max_transcribe_bytes', 50_000);
      await expectRefusal(await h.transcribe(sampleWav(2, 16000), 'audio/wav', { provider: 'fixture' }), 413, /over the cap of 50000 .*max_transcribe_bytes/);
      await expectRefusal(await h.transcribe(big, 'audio/wav', { provider: 'fixture' }), 413, /over the cap of 50000 .*max_transcribe_bytes/);
      // Chunked, so no Content-Length to refuse it by: cut off as it passes the cap.
      const chunks = Array.from({ length: 10 }, (_, i) => big.subarray(i * 32_000, (i + 1) * 32_000));
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(new Uint8Array(next));
          else controller.close();
        },
      });
      const chunked = await h.kernel.request('/api/media/transcribe?provider=fixture', {
        method: 'POST',
        headers: { 'content-type': 'audio/wav' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      await expectRefusal(chunked, 413, /max_transcribe_bytes/);
      assert.equal((await h.transcribe(sampleWav(1, 16000), 'audio/wav', { provider: 'fixture' })).status, 200, 'the service answers on');
    } finally {
      await setConfig(h.kernel, 'media.max_transcribe_bytes', 100_000);
    }
  });

  it('a refusal from mediaHooks.beforeCall (a spent budget) stops the call before the provider', async () => {
    const hooks = h.kernel.kernel.hooks.catalogue('media.hooks')!.hooks as {
      beforeCall: { tapPromise(n: string, f: () => Promise<{ status: number; error: string } | undefined>): void };
    };
    let refuse = true;
    hooks.beforeCall.tapPromise('budget-test', async () => (refuse ? { status: 402, error: 'the media budget is spent' } : undefined));
    const before = h.fixture.requests.length;
    try {
      await expectRefusal(await h.post('image', { prompt: 'fox', provider: 'fixture' }), 402, /budget is spent/);
      await expectRefusal(await h.post('video', { prompt: 'waves', provider: 'fixture' }), 402, /budget is spent/);
      assert.equal(h.fixture.requests.length, before);
    } finally {
      refuse = false;
    }
  });

  it("a provider slower than the kind's time bound is a 502 naming it, metered as failed", async () => {
    h.fixture.delayNext(3000);
    await expectRefusal(await h.post('speech', { text: 'slow', provider: 'fixture' }), 502, /'fixture' did not finish within 1 s/);
    const record = lastCall(h, 'speech');
    assert.deepEqual([record.ok, record.units, record.model], [false, 0, 'fixture']);
  });

  it("a conversion that outlasts the kind's time bound is stopped with it: ffmpeg killed, a 502 within the bound", { skip: ffmpeg }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'talon-hanging-ffmpeg-'));
    writeFileSync(path.join(dir, 'ffmpeg'), `#!/bin/sh\necho $$ > ${dir}/pid\nexec /bin/sleep 30\n`, { mode: 0o755 });
    const saved = process.env.PATH;
    process.env.PATH = dir;
    try {
      const started = Date.now();
      await expectRefusal(await h.post('speech', { text: 'convert me', provider: 'fixture', format: 'mp3' }), 502, /'fixture' did not finish within 1 s/);
      assert.ok(Date.now() - started < 5000, `answered after ${Date.now() - started} ms`);
      const pid = Number(readFileSync(path.join(dir, 'pid'), 'utf8'));
      await waitFor(() => !alive(pid), 5000, 'ffmpeg killed');
    } finally {
      process.env.PATH = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a result that is not of its kind (an HTML page labelled image/png) is refused: 502 naming the provider', async () => {
    h.fixture.imageUrls = (base) => [`${base}/files/page.html`];
    try {
      await expectRefusal(await h.post('image', { prompt: 'fox', provider: 'fixture' }), 502, /'fixture'/);
      // The provider made (and billed) the image: metered with it, though it was refused.
      const record = lastCall(h, 'image');
      assert.deepEqual([record.ok, record.units, record.model], [false, 1, 'fixture-image']);
    } finally {
      h.fixture.imageUrls = undefined;
    }
  });

  it('provider-returned URLs: another loopback origin, plain http elsewhere and private addresses are never fetched', async () => {
    const hits: string[] = [];
    const other = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end(samplePng());
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = (other.address() as AddressInfo).port;
    try {
      for (const [url, why] of [
        [`http://127.0.0.1:${port}/x.png`, /only https/],
        [`https://127.0.0.1:${port}/x.png`, /SSRF|blocked/],
        ['https://10.1.2.3/x.png', /SSRF|blocked/],
        ['https://169.254.169.254/latest/meta-data', /SSRF|blocked/],
        ['http://example.com/x.png', /only https/],
      ] as const) {
        h.fixture.imageUrls = () => [url];
        await expectRefusal(await h.post('image', { prompt: 'fox', provider: 'fixture' }), 502, why);
      }
      assert.deepEqual(hits, []);
    } finally {
      h.fixture.imageUrls = undefined;
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('no provider answer or download is read past [media] max_result_bytes, whatever cap the driver asks for', async () => {
    h.fixture.imageUrls = (base) => [`${base}/files/big.png`];
    try {
      await expectRefusal(await h.post('image', { prompt: 'fox', provider: 'fixture' }), 502, /65000 bytes/);
    } finally {
      h.fixture.imageUrls = undefined;
    }
  });

  it('each stored result is announced as media.generated', async () => {
    const channel = eventChannel(h.kernel.kernel.events, mediaEvents);
    const seen: Array<{ kind: string; file_id: string; provider: string }> = [];
    channel.subscribe(['media.generated'], (event) => void seen.push(event.data));
    try {
      const body = await expectJson<Audio>(await h.post('speech', { text: 'announce', provider: 'fixture' }), 200);
      const event = await waitFor(() => seen.find((e) => e.file_id === body.file_id), 5000, 'media.generated');
      assert.deepEqual([event.kind, event.provider], ['speech', 'fixture']);
    } finally {
      channel.close();
    }
  });
});

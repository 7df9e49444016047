import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AUDIO_FORMATS } from '../services/formats.ts';
import { convert, probe, wavFormat } from '../services/audio/index.ts';
import { run, runChecked, withTempDir } from '../services/audio/exec.ts';
import { maker, NO_FFMPEG, rms, wavWith, withFakePrograms, withoutPrograms, type Maker } from './audio-helpers.ts';

const PROBED_AS = { mp3: 'mp3', opus: 'opus', ogg: 'opus', wav: 'wav', flac: 'flac', aac: 'm4a' } as const;

const near = (actual: number | undefined, expected: number, what: string) =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) <= 50, `${what}: ${actual} ms, expected ${expected} ± 50 ms`);

async function rejectsWith(promise: Promise<unknown>, kind: string, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: Error & { kind?: string }) => {
    assert.equal(err.name, 'MediaError');
    assert.equal(err.kind, kind);
    assert.match(err.message, pattern);
    return true;
  });
}

describe('audio convert with ffmpeg', { skip: NO_FFMPEG }, () => {
  let m: Maker;
  let speech: Buffer;
  before(() => {
    m = maker();
    speech = m.sine(2.5, 16000, ['-c:a', 'pcm_s16le'], 'speech.wav');
  });
  after(() => m?.remove());

  for (const to of AUDIO_FORMATS) {
    it(`to ${to}: a ${PROBED_AS[to]} file of the same length`, async () => {
      const out = await convert(speech, to);
      const info = await probe(out);
      assert.equal(info.format, PROBED_AS[to]);
      near(info.durationMs, 2500, to);
      // Opus is always 48 kHz; the rest keep the source's rate.
      assert.equal(info.sampleRate, to === 'opus' || to === 'ogg' ? 48000 : 16000);
    });
  }

  it('resamples and downmixes on request (16 kHz mono for pocketsphinx)', async () => {
    const stereo = m.sine(1.5, 44100, ['-c:a', 'libmp3lame'], 'stereo.mp3', 2);
    const out = await convert(stereo, 'wav', { sampleRate: 16000, channels: 1 });
    const f = wavFormat(out)!;
    assert.deepEqual([f.sampleRate, f.channels, f.bitsPerSample, f.audioFormat], [16000, 1, 16, 1]);
    near((f.dataSize / f.byteRate) * 1000, 1500, 'resampled');
  });

  it('keeps only the window asked for (startSec, maxSecs): sound before 1 s, silence after', async () => {
    // 1 s of tone, then 1.5 s of silence.
    const source = m.make('sine=frequency=440:sample_rate=16000:duration=1', ['-af', 'apad=pad_dur=1.5', '-c:a', 'pcm_s16le'], 'tone-then-silence.wav');
    const loud = await convert(source, 'wav', { startSec: 0.2, maxSecs: 0.5 });
    const quiet = await convert(source, 'wav', { startSec: 1.4, maxSecs: 0.5 });
    const tail = await convert(source, 'wav', { startSec: 2 });
    for (const [name, wav, ms] of [
      ['loud', loud, 500],
      ['quiet', quiet, 500],
      ['tail', tail, 500],
    ] as const) {
      const f = wavFormat(wav)!;
      near((f.dataSize / f.byteRate) * 1000, ms, name);
    }
    assert.ok(rms(loud, wavFormat(loud)!.dataOffset) > 1000, 'the tone is in the first window');
    assert.ok(rms(quiet, wavFormat(quiet)!.dataOffset) < 10, 'the second window is silence');
  });

  it('returns the input itself when it already is what was asked, without running ffmpeg', async () => {
    assert.equal(await convert(speech, 'wav', { sampleRate: 16000, channels: 1 }), speech);
    assert.equal(await withoutPrograms(() => convert(speech, 'wav')), speech);
    const mp3 = await convert(speech, 'mp3');
    assert.equal(await convert(mp3, 'mp3'), mp3);
    assert.notEqual(await convert(speech, 'wav', { sampleRate: 8000 }), speech);
  });

  it('bytes ffmpeg cannot decode: not_supported with its reason', async () => {
    // An MP4 header with no movie in it: given to ffmpeg (its header is one it may read), which fails.
    const hollow = Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex');
    await rejectsWith(convert(hollow, 'mp3'), 'not_supported', /^ffmpeg could not convert the audio to mp3: \S/);
  });

  it('an HLS playlist naming a file on this host is refused before ffmpeg or ffprobe reads it', async () => {
    const secret = path.join(m.dir, 'secret.mp3');
    writeFileSync(secret, m.sine(2.5, 16000, ['-c:a', 'libmp3lame'], 'secret-source.mp3'));
    const playlist = Buffer.from(
      `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:3\n#EXTINF:2.5,\nfile://${secret}\n#EXTINF:2.5,\n${secret}\n#EXT-X-ENDLIST\n`,
    );
    await rejectsWith(convert(playlist, 'wav'), 'not_supported', /^the audio is not converted: it is not wav, mp3.*\(no known header/);
    await rejectsWith(convert(Buffer.from('ffconcat version 1.0\nfile ' + secret + '\n'), 'mp3'), 'not_supported', /not converted/);
    assert.deepEqual(await probe(playlist), { format: 'unknown' }, 'ffprobe did not measure the file the playlist names');
  });

  it('ffmpeg and ffprobe are told the demuxer of the header and only the file protocol', async () => {
    const mp3 = m.sine(0.5, 16000, ['-c:a', 'libmp3lame'], 'told.mp3');
    const webm = m.sine(0.5, 48000, ['-c:a', 'libopus', '-f', 'webm'], 'told.webm');
    const record = (dir: string, name: string) => `printf '%s\\n' "$@" > ${dir}/${name}.args; exit 1`;
    await withFakePrograms(
      (dir) => ({ ffmpeg: record(dir, 'ffmpeg'), ffprobe: record(dir, 'ffprobe') }),
      async (dir) => {
        await rejectsWith(convert(mp3, 'wav'), 'not_supported', /^ffmpeg could not convert/);
        assert.deepEqual(await probe(webm), { format: 'webm' });
        for (const [program, demuxer] of [
          ['ffmpeg', 'mp3'],
          ['ffprobe', 'matroska'],
        ]) {
          const args = readFileSync(path.join(dir, `${program}.args`), 'utf8').split('\n');
          const input = args.length - 1 - [...args].reverse().findIndex((a) => a.endsWith('/input'));
          const [f, whitelist] = [args.indexOf('-f'), args.indexOf('-protocol_whitelist')];
          assert.ok(f >= 0 && f < input && whitelist >= 0 && whitelist < input, `${program} ${args.join(' ')}`);
          assert.deepEqual([args[f + 1], args[whitelist + 1]], [demuxer, 'file'], program);
        }
      },
    );
  });
});

describe('audio convert refusals', () => {
  it('without ffmpeg: a not_supported MediaError naming ffmpeg and how to install it', async () => {
    const wav = wavWith({ rate: 16000, byteRate: 32000, blockAlign: 2 }, 3200);
    await withoutPrograms(async () => {
      await rejectsWith(convert(wav, 'mp3'), 'not_supported', /needs ffmpeg.*apt install ffmpeg/);
      await rejectsWith(convert(wav, 'wav', { sampleRate: 8000 }), 'not_supported', /needs ffmpeg/);
      assert.equal(await convert(wav, 'wav', { sampleRate: 16000, channels: 1 }), wav, 'a no-op needs no ffmpeg');
    });
  });

  it('a bad format or option is refused naming it', async () => {
    await rejectsWith(convert(Buffer.alloc(10), 'midi' as 'mp3'), 'not_supported', /^format: midi/);
    await rejectsWith(convert(Buffer.alloc(10), 'wav', { sampleRate: 12 }), 'not_supported', /^sampleRate/);
    await rejectsWith(convert(Buffer.alloc(10), 'wav', { startSec: -1 }), 'not_supported', /^startSec/);
  });

  it('a program past its time is killed: an outage naming it, well before it would have ended', async () => {
    const started = Date.now();
    await rejectsWith(run('/bin/sleep', ['20'], { timeoutMs: 300 }), 'outage', /^sleep did not finish within 0 s/);
    assert.ok(Date.now() - started < 5000, `killed after ${Date.now() - started} ms`);
  });

  it("the kit's run (local engines): stdout, or an outage naming the program, its exit code and last line; withTempDir cleans up", async () => {
    const signal = new AbortController().signal;
    assert.equal((await runChecked('/bin/sh', ['-c', 'echo heard; echo noise >&2'], { timeoutMs: 5000, signal })).toString(), 'heard\n');
    await rejectsWith(
      runChecked('/bin/sh', ['-c', 'echo first >&2; echo the reason >&2; exit 3'], { timeoutMs: 5000, signal }),
      'outage',
      /^sh failed \(exit code 3\): the reason$/,
    );
    let kept = '';
    await assert.rejects(
      withTempDir(async (dir) => {
        kept = dir;
        writeFileSync(path.join(dir, 'input.wav'), 'x');
        throw new Error('the engine failed');
      }),
      /the engine failed/,
    );
    assert.ok(kept && !existsSync(kept), 'the folder is gone, also after a failure');
  });

  it('a program that writes more than it may is stopped: an outage saying so', async () => {
    await rejectsWith(run('/usr/bin/yes', [], { timeoutMs: 10_000, maxOutputBytes: 1000 }), 'outage', /^yes wrote more than 1000 bytes/);
  });

  it('an aborted call kills its program and rejects with the reason', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 100);
    const started = Date.now();
    await assert.rejects(run('/bin/sleep', ['20'], { timeoutMs: 20_000, signal: controller.signal }), /caller gave up/);
    assert.ok(Date.now() - started < 5000);
  });
});

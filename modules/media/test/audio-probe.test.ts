import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { convert, parseHeaders, probe, which } from '../services/audio/index.ts';
import { maker, NO_FFMPEG, wavWith, withoutPrograms, type Maker } from './audio-helpers.ts';

const fixture = readFileSync(path.join(import.meta.dirname, '../../../test/fixtures/media/sample.mp4'));

/** Files made by ffmpeg: what each must measure (2.5 s of sound unless said otherwise). */
const CASES: Array<{ name: string; rate: number; args: string[]; format: string; sampleRate?: number; channels?: number; seconds?: number }> = [
  { name: 'a.wav', rate: 16000, args: ['-c:a', 'pcm_s16le'], format: 'wav' },
  // ffprobe says 2.592 s for this one: only the LAME tag's delay and padding give the 2.5 s a decoder plays.
  { name: 'lame.mp3', rate: 16000, args: ['-c:a', 'libmp3lame', '-q:a', '4'], format: 'mp3' },
  { name: 'cbr44.mp3', rate: 44100, args: ['-c:a', 'libmp3lame', '-b:a', '128k'], format: 'mp3', channels: 2 },
  { name: 'a.opus.ogg', rate: 16000, args: ['-c:a', 'libopus', '-b:a', '32k', '-f', 'ogg'], format: 'opus', sampleRate: 48000 },
  { name: 'a.vorbis.ogg', rate: 22050, args: ['-c:a', 'libvorbis', '-f', 'ogg'], format: 'ogg' },
  { name: 'a.flac', rate: 44100, args: ['-c:a', 'flac'], format: 'flac' },
  { name: 'a.m4a', rate: 24000, args: ['-c:a', 'aac', '-f', 'ipod'], format: 'm4a' },
  // ADTS cannot say how many priming samples there are: at 48 kHz one frame is 21 ms.
  { name: 'a.aac', rate: 48000, args: ['-c:a', 'aac', '-f', 'adts'], format: 'aac' },
];

const near = (actual: number | undefined, expected: number, what: string) =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) <= 50, `${what}: ${actual} ms, expected ${expected} ± 50 ms`);

describe('audio probe against real files', { skip: NO_FFMPEG }, () => {
  let m: Maker;
  const files = new Map<string, Buffer>();
  before(() => {
    m = maker();
    for (const c of CASES) files.set(c.name, m.sine(2.5, c.rate, c.args, c.name, c.channels ?? 1));
  });
  after(() => m?.remove());

  for (const c of CASES) {
    it(`${c.name}: duration within 50 ms, the exact sample rate, with ffprobe and from the headers alone`, async () => {
      const bytes = files.get(c.name)!;
      const expectedRate = c.sampleRate ?? c.rate;
      for (const [how, info] of [
        ['probe', await probe(bytes)],
        ['headers', parseHeaders(bytes)],
      ] as const) {
        assert.equal(info?.format, c.format, `${how} format`);
        near(info?.durationMs, 2500, `${how} ${c.name}`);
        assert.equal(info?.sampleRate, expectedRate, `${how} sample rate`);
      }
    });
  }

  it('an MP3 without a Xing header is measured by walking its frames, VBR included (not guessed from one bitrate)', async () => {
    const vbr = m.sine(2.5, 48000, ['-c:a', 'libmp3lame', '-q:a', '2', '-write_xing', '0'], 'vbr.mp3');
    const info = await withoutPrograms(() => probe(vbr));
    // No header, so no delay to take off: the frames hold the 2.5 s plus the encoder's delay and padding (< 2 frames).
    assert.ok(info.durationMs! >= 2500 && info.durationMs! <= 2500 + 48, `walked: ${info.durationMs}`);
    assert.equal(info.sampleRate, 48000);
  });

  it('a video: duration, width and height from the MP4 headers, and the same from ffprobe', async () => {
    const info = parseHeaders(fixture);
    assert.deepEqual({ ...info, durationMs: Math.round(info!.durationMs!) }, { format: 'mp4', durationMs: 1000, width: 160, height: 90, sampleRate: 44100 });
    const made = m.make('testsrc=size=320x240:duration=1.5:rate=10', ['-c:v', 'libx264', '-pix_fmt', 'yuv420p'], 'v.mp4');
    const probed = await probe(made);
    assert.equal(probed.format, 'mp4');
    assert.equal(probed.width, 320);
    assert.equal(probed.height, 240);
    near(probed.durationMs, 1500, 'mp4');
  });

  it('images: PNG and JPEG sizes from their headers', async () => {
    const png = m.make('color=c=red:size=34x18:duration=0.1', ['-frames:v', '1', '-f', 'image2', '-c:v', 'png'], 'a.png');
    const jpeg = m.make('color=c=red:size=38x22:duration=0.1', ['-frames:v', '1', '-f', 'image2', '-c:v', 'mjpeg'], 'a.jpg');
    assert.deepEqual(await probe(png), { format: 'png', width: 34, height: 18 });
    assert.deepEqual(await probe(jpeg), { format: 'jpeg', width: 38, height: 22 });
  });

  it('ffprobe measures what the headers cannot (WebM); without it the format alone is known', async () => {
    const webm = m.sine(2.5, 48000, ['-c:a', 'libopus', '-f', 'webm'], 'a.webm');
    const measured = await probe(webm);
    assert.equal(measured.format, 'webm');
    near(measured.durationMs, 2500, 'webm with ffprobe');
    assert.equal(measured.sampleRate, 48000);
    const fallback = await withoutPrograms(async () => {
      assert.equal(which('ffprobe'), undefined, 'the empty PATH hides ffprobe');
      return probe(webm);
    });
    assert.deepEqual(fallback, { format: 'webm' });
  });

  it('a forged frame count, granule or sample total is bounded by the frames, packets or bytes that are there', async () => {
    const mp3 = Buffer.from(files.get('lame.mp3')!);
    const xing = Math.max(mp3.indexOf('Xing'), mp3.indexOf('Info'));
    mp3.writeUInt32BE(1_000_000, xing + 8);
    const opus = Buffer.from(files.get('a.opus.ogg')!);
    opus.writeBigInt64LE(48_000n * 3600n, opus.lastIndexOf('OggS') + 6);
    const flac = Buffer.from(files.get('a.flac')!.subarray(0, 4000));
    const streamInfo = flac.indexOf('fLaC') + 8;
    flac[streamInfo + 13] |= 0x0f;
    flac.writeUInt32BE(0xffffffff, streamInfo + 14);
    for (const [name, bytes, most] of [
      ['mp3 with a Xing count of a million frames', mp3, 2700],
      ['opus with a last granule of an hour', opus, 3000],
      // FLAC's bound is coarse (frames of at least 10 bytes, each of at most its largest block): 2^36 samples would be 18 days.
      ['4 KB of flac saying 2^36 samples', flac, 45_000],
    ] as const) {
      for (const [how, info] of [
        ['probe', await probe(bytes)],
        ['headers', parseHeaders(bytes)],
      ] as const) {
        assert.ok(info?.durationMs !== undefined && info.durationMs < most, `${how}, ${name}: ${info?.durationMs} ms`);
      }
    }
  });

  it('without ffprobe the headers still answer for the audio formats', async () => {
    const results = await withoutPrograms(() => Promise.all(CASES.map((c) => probe(files.get(c.name)!))));
    results.forEach((info, i) => near(info.durationMs, 2500, `fallback ${CASES[i].name}`));
  });
});

describe('audio probe without programs', () => {
  it('bytes nobody recognises are format "unknown", with or without ffprobe', async () => {
    const junk = Buffer.from('this is not audio at all, only text that goes on for a while '.repeat(20));
    assert.deepEqual(await probe(junk), { format: 'unknown' });
    assert.deepEqual(await withoutPrograms(() => probe(junk)), { format: 'unknown' });
  });

  it('a WAV whose header contradicts itself (3 KB with a byte rate of 1) is unknown: not measured, converted or given to ffprobe', async () => {
    const honest = wavWith({ rate: 8000, byteRate: 16000, blockAlign: 2 });
    assert.deepEqual(parseHeaders(honest), { format: 'wav', sampleRate: 8000, channels: 1, durationMs: 187.5 });
    for (const [what, forged] of [
      ['byte rate 1', wavWith({ rate: 8000, byteRate: 1, blockAlign: 2 })],
      ['block align 4 for 16-bit mono', wavWith({ rate: 8000, byteRate: 32000, blockAlign: 4 })],
      ['a rate of 1 Hz', wavWith({ rate: 1, byteRate: 2, blockAlign: 2 })],
      ['no channels', wavWith({ channels: 0, rate: 8000, byteRate: 0, blockAlign: 0 })],
    ] as const) {
      assert.deepEqual(parseHeaders(forged), { format: 'unknown' }, what);
      assert.deepEqual(await probe(forged), { format: 'unknown' }, `${what} (with ffprobe on PATH: ${Boolean(which('ffprobe'))})`);
      await assert.rejects(convert(forged, 'mp3'), (err: Error & { kind?: string }) => err.kind === 'not_supported' && /not converted/.test(err.message));
    }
  });

  it('a compressed WAV (IMA ADPCM) lasts at most what its data allows, whatever its byte rate or fact chunk say', async () => {
    const adpcm = wavWith({ code: 0x11, rate: 8000, byteRate: 1, blockAlign: 256, bits: 4 }, 3072);
    const info = await probe(adpcm);
    assert.equal(info.format, 'wav');
    assert.ok(info.durationMs! <= (3072 / 600) * 1000, `at most 3072 bytes at 600 B/s: ${info.durationMs} ms`);
  });

  it('a WAV written to a pipe (sizes left at 0xFFFFFFFF) counts the data that is there', () => {
    const rate = 8000;
    const piped = wavWith({ rate, byteRate: rate * 2, blockAlign: 2 }, rate * 2 * 3); // 3 s, 16-bit mono
    piped.writeUInt32LE(0xffffffff, 4);
    piped.writeUInt32LE(0xffffffff, 40);
    assert.deepEqual(parseHeaders(piped), { format: 'wav', sampleRate: rate, channels: 1, durationMs: 3000 });
  });

  it('which finds programs on PATH once, and nothing on an empty PATH', async () => {
    assert.ok(which('sh'), 'sh is on PATH');
    assert.equal(which('no-such-program-talon'), undefined);
    await withoutPrograms(async () => assert.equal(which('sh'), undefined));
  });

  it('a program installed after a miss is found a minute later, without a restart', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const dir = mkdtempSync(path.join(tmpdir(), 'talon-which-'));
    const saved = process.env.PATH;
    process.env.PATH = dir;
    try {
      assert.equal(which('talon-late-tool'), undefined);
      writeFileSync(path.join(dir, 'talon-late-tool'), '#!/bin/sh\n', { mode: 0o755 });
      assert.equal(which('talon-late-tool'), undefined, 'the miss is remembered for a while');
      t.mock.timers.tick(61_000);
      assert.equal(which('talon-late-tool'), path.join(dir, 'talon-late-tool'));
    } finally {
      process.env.PATH = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

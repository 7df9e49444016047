import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AudioFormat, MediaInfo } from '@talon/media';
import { AUDIO_FORMATS } from '../formats.ts';
import { mediaError } from '../kit/errors.ts';
import { lastLine, run, withTempDir } from './exec.ts';
import { inputOptions, READABLE_FORMATS } from './demuxers.ts';
import { parseHeaders, wavFormat } from './headers/index.ts';
import { which } from './which.ts';

export interface ConvertOptions {
  /** Resample to this rate (Hz); ignored for Opus, which is always encoded at 48 kHz. */
  sampleRate?: number;
  channels?: number;
  /** The window to keep: from startSec, at most maxSecs (for transcribing long audio piece by piece). */
  startSec?: number;
  maxSecs?: number;
  signal?: AbortSignal;
}

/** ffmpeg is killed when this is up. */
const FFMPEG_TIMEOUT_MS = 120_000;

/**
 * ffmpeg's encoder and container for each format. `opus` and `ogg` are both Ogg/Opus at 48 kHz: what Telegram and
 * WhatsApp voice notes need, and Vorbis offers nothing Opus does not. `aac` is AAC in an M4A (MP4) file rather than
 * raw ADTS: the M4A carries the encoder's priming in its edit list, so its duration measures exactly (ADTS cannot),
 * and every browser and phone plays it.
 */
const ENCODERS: Record<AudioFormat, string[]> = {
  mp3: ['-c:a', 'libmp3lame', '-q:a', '4', '-f', 'mp3'],
  opus: ['-c:a', 'libopus', '-b:a', '48k', '-ar', '48000', '-f', 'ogg'],
  ogg: ['-c:a', 'libopus', '-b:a', '48k', '-ar', '48000', '-f', 'ogg'],
  wav: ['-c:a', 'pcm_s16le', '-f', 'wav'],
  flac: ['-c:a', 'flac', '-f', 'flac'],
  aac: ['-c:a', 'aac', '-b:a', '96k', '-movflags', '+faststart', '-f', 'ipod'],
};

/** What probe calls each target's output, to see that an input already is what was asked. */
const PROBED_AS: Record<AudioFormat, string> = { mp3: 'mp3', opus: 'opus', ogg: 'opus', wav: 'wav', flac: 'flac', aac: 'm4a' };

function check(to: string, o: ConvertOptions): void {
  if (!(AUDIO_FORMATS as readonly string[]).includes(to)) throw mediaError('not_supported', `format: ${to} is not one of ${AUDIO_FORMATS.join(', ')}`);
  const bad = (field: string, ok: boolean) => {
    if (!ok) throw mediaError('not_supported', `${field} is out of range`);
  };
  if (o.sampleRate !== undefined) bad('sampleRate', Number.isInteger(o.sampleRate) && o.sampleRate >= 8000 && o.sampleRate <= 192000);
  if (o.channels !== undefined) bad('channels', Number.isInteger(o.channels) && o.channels >= 1 && o.channels <= 8);
  if (o.startSec !== undefined) bad('startSec', Number.isFinite(o.startSec) && o.startSec >= 0);
  if (o.maxSecs !== undefined) bad('maxSecs', Number.isFinite(o.maxSecs) && o.maxSecs > 0);
}

/** The input is already what was asked (same format, rate and channels, no window): it is returned as it is. */
function alreadyIs(bytes: Buffer, info: MediaInfo | undefined, to: AudioFormat, o: ConvertOptions): boolean {
  if (o.startSec || o.maxSecs !== undefined) return false;
  if (!info || info.format !== PROBED_AS[to]) return false;
  if (to === 'wav') {
    const wav = wavFormat(bytes);
    if (!wav || wav.audioFormat !== 1 || wav.bitsPerSample !== 16) return false;
  }
  return (
    (o.sampleRate === undefined || to === 'opus' || to === 'ogg' || info.sampleRate === o.sampleRate) &&
    (o.channels === undefined || info.channels === o.channels)
  );
}

function ffmpegArgs(input: string, demuxer: string[], output: string, to: AudioFormat, o: ConvertOptions): string[] {
  // -ss and -t before -i: ffmpeg seeks in the input instead of decoding everything before the window.
  const window = [...(o.startSec ? ['-ss', String(o.startSec)] : []), ...(o.maxSecs !== undefined ? ['-t', String(o.maxSecs)] : [])];
  const shape = [...(o.channels ? ['-ac', String(o.channels)] : []), ...(o.sampleRate && to !== 'opus' && to !== 'ogg' ? ['-ar', String(o.sampleRate)] : [])];
  return [
    '-nostdin',
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    ...window,
    ...demuxer,
    '-i',
    input,
    '-vn',
    '-sn',
    '-dn',
    '-map_metadata',
    '-1',
    ...shape,
    ...ENCODERS[to],
    output,
  ];
}

/**
 * Audio to another format with ffmpeg, through files in a private temporary folder (MP4 input needs seeking, and
 * WAV and M4A output need their headers rewritten at the end, which a pipe cannot do). Without ffmpeg only a no-op
 * succeeds; anything else is a `not_supported` MediaError naming ffmpeg. Only bytes whose header is a format of
 * demuxers.ts are given to ffmpeg, with that demuxer named (anything else is `not_supported` before ffmpeg runs);
 * bytes ffmpeg then cannot decode are `not_supported` with its reason.
 */
export async function convert(bytes: Buffer, to: AudioFormat, options: ConvertOptions = {}): Promise<Buffer> {
  check(to, options);
  options.signal?.throwIfAborted();
  const info = parseHeaders(bytes);
  if (alreadyIs(bytes, info, to, options)) return bytes;
  const demuxer = inputOptions(info);
  if (!demuxer) {
    const found = info && info.format !== 'unknown' ? `its header says ${info.format}` : 'no known header, or one that contradicts itself';
    throw mediaError('not_supported', `the audio is not converted: it is not ${READABLE_FORMATS} (${found})`);
  }
  const ffmpeg = which('ffmpeg');
  if (!ffmpeg) throw mediaError('not_supported', `converting audio to ${to} needs ffmpeg, which is not installed on this host (apt install ffmpeg)`);
  return withTempDir(async (dir) => {
    const input = path.join(dir, 'input');
    const output = path.join(dir, `output.${to}`);
    await writeFile(input, bytes);
    const result = await run(ffmpeg, ffmpegArgs(input, demuxer, output, to, options), { timeoutMs: FFMPEG_TIMEOUT_MS, signal: options.signal });
    if (result.code !== 0) throw mediaError('not_supported', `ffmpeg could not convert the audio to ${to}: ${lastLine(result.stderr)}`);
    return readFile(output);
  });
}

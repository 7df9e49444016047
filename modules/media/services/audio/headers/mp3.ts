import type { MediaInfo } from '@talon/media';
import { skipId3v2 } from './id3.ts';

interface Frame {
  sampleRate: number;
  channels: number;
  /** Decoded samples per channel in one frame. */
  samples: number;
  /** The frame's length in bytes, header included. */
  length: number;
  /** Where the Xing/Info header would start, from the frame's start (after the side information). */
  xingOffset: number;
}

const BITRATES = {
  v1l1: [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  v1l2: [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  v1l3: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2l1: [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  v2l23: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

/** One MPEG audio frame header (MPEG 1, 2 or 2.5, layer I, II or III); undefined when the bytes are not one. */
export function frameAt(b: Buffer, at: number): Frame | undefined {
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1] & 0xe0) !== 0xe0) return undefined;
  const version = (b[at + 1] >> 3) & 3; // 3 = MPEG 1, 2 = MPEG 2, 0 = MPEG 2.5
  const layer = 4 - ((b[at + 1] >> 1) & 3); // 1, 2 or 3; 4 is reserved (and is ADTS's sync)
  const bitrateIndex = b[at + 2] >> 4;
  const rateIndex = (b[at + 2] >> 2) & 3;
  if (version === 1 || layer === 4 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined;
  const v1 = version === 3;
  const table = v1 ? [BITRATES.v1l1, BITRATES.v1l2, BITRATES.v1l3][layer - 1] : layer === 1 ? BITRATES.v2l1 : BITRATES.v2l23;
  const bitrate = table[bitrateIndex] * 1000;
  const sampleRate = RATES[version][rateIndex];
  const padding = (b[at + 2] >> 1) & 1;
  const mono = b[at + 3] >> 6 === 3;
  const samples = layer === 1 ? 384 : layer === 2 || v1 ? 1152 : 576;
  const length = layer === 1 ? (Math.floor((12 * bitrate) / sampleRate) + padding) * 4 : Math.floor(((samples / 8) * bitrate) / sampleRate) + padding;
  const sideInfo = v1 ? (mono ? 17 : 32) : mono ? 9 : 17;
  return { sampleRate, channels: mono ? 1 : 2, samples, length, xingOffset: 4 + sideInfo };
}

/** The first frame whose successor is also a frame (one 0xFFE pattern alone is too easily found in tag data). */
function firstFrame(b: Buffer, from: number): { at: number; frame: Frame } | undefined {
  const limit = Math.min(b.length - 4, from + 64 * 1024);
  for (let at = from; at < limit; at++) {
    const frame = frameAt(b, at);
    if (!frame) continue;
    const next = at + frame.length;
    if (next >= b.length || frameAt(b, next)) return { at, frame };
  }
  return undefined;
}

/**
 * Samples in the stream from the encoder's own header: Xing/Info (LAME, ffmpeg) with the LAME tag's encoder delay
 * and padding taken off, so the figure is what a decoder plays; or Fraunhofer's VBRI.
 */
function headerSamples(b: Buffer, at: number, frame: Frame): number | undefined {
  const x = at + frame.xingOffset;
  const tag = b.toString('latin1', x, x + 4);
  if ((tag === 'Xing' || tag === 'Info') && x + 12 <= b.length) {
    const flags = b.readUInt32BE(x + 4);
    if (!(flags & 1)) return undefined;
    const total = b.readUInt32BE(x + 8) * frame.samples;
    const lame = x + 8 + [1, 2, 4, 8].reduce((n, f) => n + (flags & f ? (f === 4 ? 100 : 4) : 0), 0);
    if (lame + 24 > b.length || !/^[\x20-\x7e]{4}/.test(b.toString('latin1', lame, lame + 4))) return total;
    const delay = (b[lame + 21] << 4) | (b[lame + 22] >> 4);
    const padding = ((b[lame + 22] & 0x0f) << 8) | b[lame + 23];
    return delay + padding < total ? total - delay - padding : total;
  }
  const v = at + 36;
  if (b.toString('latin1', v, v + 4) === 'VBRI' && v + 18 <= b.length) return b.readUInt32BE(v + 14) * frame.samples;
  return undefined;
}

/** Every frame walked and counted: exact in frames, no guess from the bitrate (the Xing frame itself counts too). */
function walkedSamples(b: Buffer, at: number): number {
  let samples = 0;
  for (let frame = frameAt(b, at); frame; frame = frameAt(b, at)) {
    if (at + frame.length > b.length) break; // a cut last frame does not play
    samples += frame.samples;
    at += frame.length;
  }
  return samples;
}

export function parseMp3(b: Buffer): MediaInfo | undefined {
  const start = skipId3v2(b);
  const found = firstFrame(b, start);
  // Without an ID3 tag, the file must start on a frame: random bytes hold 0xFFE patterns.
  if (!found || (start === 0 && found.at !== 0)) return undefined;
  const { at, frame } = found;
  // The encoder's header is exact (it knows the delay and padding) but states a count a forger can set: the frames
  // that are really there bound it (a cut download, or a Xing count of millions on a few kilobytes).
  const walked = walkedSamples(b, at);
  const samples = Math.min(headerSamples(b, at, frame) ?? walked, walked);
  return { format: 'mp3', sampleRate: frame.sampleRate, channels: frame.channels, durationMs: (samples / frame.sampleRate) * 1000 };
}

import type { MediaInfo } from '@talon/media';
import { skipId3v2 } from './id3.ts';

/** The smallest FLAC frame: a 6-byte header, a 2-byte constant subframe, the 2-byte CRC. */
const MIN_FRAME_BYTES = 10;

/** The 34-byte STREAMINFO block: sample rate, channels and the total number of samples (0 = not known). */
export function streamInfo(b: Buffer, at: number): MediaInfo | undefined {
  if (at + 18 > b.length) return undefined;
  const sampleRate = (b[at + 10] << 12) | (b[at + 11] << 4) | (b[at + 12] >> 4);
  const channels = ((b[at + 12] >> 1) & 0x07) + 1;
  const total = (b[at + 13] & 0x0f) * 2 ** 32 + b.readUInt32BE(at + 14);
  if (!sampleRate) return undefined;
  const info: MediaInfo = { format: 'flac', sampleRate, channels };
  // The total is a number a forger sets: frames of at most the largest block, each at least MIN_FRAME_BYTES, bound it.
  const maxBlock = b.readUInt16BE(at + 2) || 65535;
  const most = Math.floor((b.length - at) / MIN_FRAME_BYTES) * maxBlock;
  if (total > 0) info.durationMs = (Math.min(total, most) / sampleRate) * 1000;
  return info;
}

/** A native FLAC file: "fLaC" (after an ID3v2 tag some taggers add), its first metadata block is STREAMINFO. */
export function parseFlac(b: Buffer): MediaInfo | undefined {
  const at = skipId3v2(b);
  if (b.toString('latin1', at, at + 4) !== 'fLaC') return undefined;
  const type = b[at + 4] & 0x7f;
  return (type === 0 && streamInfo(b, at + 8)) || { format: 'flac' };
}

import type { MediaInfo } from '@talon/media';
import { skipId3v2 } from './id3.ts';

/** The 34-byte STREAMINFO block: sample rate, channels and the total number of samples (0 = not known). */
export function streamInfo(b: Buffer, at: number): MediaInfo | undefined {
  if (at + 18 > b.length) return undefined;
  const sampleRate = (b[at + 10] << 12) | (b[at + 11] << 4) | (b[at + 12] >> 4);
  const channels = ((b[at + 12] >> 1) & 0x07) + 1;
  const total = (b[at + 13] & 0x0f) * 2 ** 32 + b.readUInt32BE(at + 14);
  if (!sampleRate) return undefined;
  const info: MediaInfo = { format: 'flac', sampleRate, channels };
  if (total > 0) info.durationMs = (total / sampleRate) * 1000;
  return info;
}

/** A native FLAC file: "fLaC" (after an ID3v2 tag some taggers add), its first metadata block is STREAMINFO. */
export function parseFlac(b: Buffer): MediaInfo | undefined {
  const at = skipId3v2(b);
  if (b.toString('latin1', at, at + 4) !== 'fLaC') return undefined;
  const type = b[at + 4] & 0x7f;
  return (type === 0 && streamInfo(b, at + 8)) || { format: 'flac' };
}

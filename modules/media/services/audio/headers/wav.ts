import type { MediaInfo } from '@talon/media';

export interface WavFormat {
  /** 1 = PCM, 3 = float, 0xfffe = extensible (the real code is in its sub-format). */
  audioFormat: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  bitsPerSample: number;
  dataOffset: number;
  dataSize: number;
}

/** The fmt and data chunks of a RIFF/WAVE file; undefined when it is not one or either chunk is missing. */
export function wavFormat(b: Buffer): WavFormat | undefined {
  if (b.length < 12 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let fmt: Omit<WavFormat, 'dataOffset' | 'dataSize'> | undefined;
  for (let off = 12; off + 8 <= b.length;) {
    const id = b.toString('latin1', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ' && body + 16 <= b.length) {
      fmt = {
        audioFormat: b.readUInt16LE(body),
        channels: b.readUInt16LE(body + 2),
        sampleRate: b.readUInt32LE(body + 4),
        byteRate: b.readUInt32LE(body + 8),
        bitsPerSample: b.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!fmt) return undefined;
      // A streamed writer leaves the size at 0 or 0xffffffff, a cut file has less than it says: count what is there.
      const rest = b.length - body;
      return { ...fmt, dataOffset: body, dataSize: size === 0 || size > rest ? rest : size };
    }
    off = body + size + (size & 1);
  }
  return undefined;
}

export function parseWav(b: Buffer): MediaInfo | undefined {
  const f = wavFormat(b);
  if (!f) return b.length >= 12 && b.toString('latin1', 8, 12) === 'WAVE' && b.toString('latin1', 0, 4) === 'RIFF' ? { format: 'wav' } : undefined;
  const info: MediaInfo = { format: 'wav', sampleRate: f.sampleRate, channels: f.channels };
  if (f.byteRate > 0) info.durationMs = (f.dataSize / f.byteRate) * 1000;
  return info;
}

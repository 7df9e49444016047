import type { MediaInfo } from '@talon/media';

export interface WavFormat {
  /** 1 = PCM, 3 = float, 0xfffe = extensible (the real code is in its sub-format). */
  audioFormat: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  /** Bytes of one sample frame (all channels). */
  blockAlign: number;
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
        blockAlign: b.readUInt16LE(body + 12),
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

/** Codes whose sample frames are all one size (PCM, float, A-law, µ-law, extensible): their byte rate follows from the shape. */
const FIXED_FRAME_CODES = new Set([1, 3, 6, 7, 0xfffe]);
/** Rates of audio anyone sends: a forged rate of 1 Hz would stretch 3 KB into most of an hour. */
const MIN_RATE = 1000;
const MAX_RATE = 768_000;
/** Compressed codecs in a WAV (ADPCM, GSM, G.72x, MP3) take at least this many bytes a second: the longest data can last. */
const MIN_COMPRESSED_BYTE_RATE = 600;

/** The header agrees with itself: a plausible rate, and for fixed-size frames byteRate = rate × blockAlign = rate × channels × bits / 8. */
function consistent(f: WavFormat): boolean {
  if (f.channels < 1 || f.sampleRate < MIN_RATE || f.sampleRate > MAX_RATE) return false;
  if (!FIXED_FRAME_CODES.has(f.audioFormat)) return true;
  const frame = (f.channels * f.bitsPerSample) / 8;
  return f.bitsPerSample % 8 === 0 && f.bitsPerSample > 0 && f.blockAlign === frame && f.byteRate === f.sampleRate * frame;
}

/**
 * A WAV's duration is its data over its byte rate, which the header states and a forger sets (a 3 KB file with a
 * byte rate of 1 would be metered as 3000 s). A header that contradicts itself is not audio this service reads
 * (`unknown`: not converted, not transcribed, never given to ffprobe); a compressed one lasts at most what its data
 * allows at the lowest rate such codecs have.
 */
export function parseWav(b: Buffer): MediaInfo | undefined {
  const f = wavFormat(b);
  if (!f) return b.length >= 12 && b.toString('latin1', 8, 12) === 'WAVE' && b.toString('latin1', 0, 4) === 'RIFF' ? { format: 'wav' } : undefined;
  if (!consistent(f)) return { format: 'unknown' };
  const byteRate = FIXED_FRAME_CODES.has(f.audioFormat) ? f.byteRate : Math.max(f.byteRate, MIN_COMPRESSED_BYTE_RATE);
  return { format: 'wav', sampleRate: f.sampleRate, channels: f.channels, durationMs: (f.dataSize / byteRate) * 1000 };
}

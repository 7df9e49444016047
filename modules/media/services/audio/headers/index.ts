import type { MediaInfo } from '@talon/media';
import { parseAdts } from './adts.ts';
import { parseFlac } from './flac.ts';
import { parseImage } from './image.ts';
import { parseMp3 } from './mp3.ts';
import { parseMp4 } from './mp4.ts';
import { parseOgg } from './ogg.ts';
import { parseWav } from './wav.ts';

/** Matroska/WebM: EBML's magic, and the DocType near the start says which. */
function parseMatroska(b: Buffer): MediaInfo | undefined {
  if (b.length < 4 || b.readUInt32BE(0) !== 0x1a45dfa3) return undefined;
  return { format: b.subarray(0, 64).includes('webm') ? 'webm' : 'mkv' };
}

/**
 * What the bytes' own headers say, in TypeScript: WAV, MP3, Ogg (Opus, Vorbis, FLAC), FLAC, AAC (ADTS), MP4/M4A,
 * WebM (format only) and PNG, JPEG, GIF, WebP sizes. Undefined when no parser knows the bytes.
 */
export function parseHeaders(b: Buffer): MediaInfo | undefined {
  // ADTS before MP3: both start with a 0xFFF sync, and the MP3 parser refuses ADTS's layer bits anyway.
  for (const parse of [parseWav, parseOgg, parseFlac, parseMp4, parseMatroska, parseImage, parseAdts, parseMp3]) {
    const info = parse(b);
    if (info) return info;
  }
  return undefined;
}

export { wavFormat } from './wav.ts';

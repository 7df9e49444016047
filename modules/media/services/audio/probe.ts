import type { MediaInfo } from '@talon/media';
import { ffprobeInfo } from './ffprobe.ts';
import { inputOptions } from './demuxers.ts';
import { parseHeaders } from './headers/index.ts';
import { which } from './which.ts';

/** ffprobe is killed when this is up. */
const FFPROBE_TIMEOUT_MS = 30_000;

const IMAGES = new Set(['png', 'jpeg', 'gif', 'webp']);

/** The headers answered everything a caller needs: a duration with a rate or a size, or an image's size. */
function complete(info: MediaInfo): boolean {
  if (IMAGES.has(info.format)) return info.width !== undefined;
  return info.durationMs !== undefined && (info.sampleRate !== undefined || info.width !== undefined);
}

/**
 * Duration, sample rate, channels and size measured from the bytes. The headers are read first and win where they
 * answer: they are exact for WAV, FLAC, Ogg and MP3 with a Xing/LAME header, where ffprobe is not (measured on a
 * 2.5 s, 16 kHz file: ffprobe said 2.592 s for the MP3, whose LAME tag gives 2.500 s, and 2.624 s for ADTS AAC, an
 * estimate from the bitrate). ffprobe, where installed, fills in the rest (WebM, odd files) of the formats it may be
 * given (demuxers.ts: never bytes whose header is none of them); without it the headers' answer stands. Bytes nobody
 * recognises are `{format: 'unknown'}`.
 */
export async function probe(bytes: Buffer, options: { signal?: AbortSignal } = {}): Promise<MediaInfo> {
  const fromHeaders = parseHeaders(bytes);
  if (fromHeaders && complete(fromHeaders)) return fromHeaders;
  const ffprobe = which('ffprobe');
  const input = inputOptions(fromHeaders);
  if (ffprobe && input) {
    options.signal?.throwIfAborted();
    const measured = await ffprobeInfo(ffprobe, bytes, input, { timeoutMs: FFPROBE_TIMEOUT_MS, signal: options.signal }).catch((err: unknown) => {
      if (options.signal?.aborted) throw err;
      return undefined;
    });
    if (measured) return { ...measured, ...defined(fromHeaders) };
  }
  return fromHeaders ?? { format: 'unknown' };
}

function defined(info: MediaInfo | undefined): Partial<MediaInfo> {
  return Object.fromEntries(Object.entries(info ?? {}).filter(([, v]) => v !== undefined));
}

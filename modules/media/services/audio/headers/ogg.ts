import type { MediaInfo } from '@talon/media';
import { streamInfo } from './flac.ts';

interface Page {
  granule: bigint;
  serial: number;
  /** Where the page's first packet starts. */
  body: number;
}

function pageAt(b: Buffer, at: number): Page | undefined {
  if (at + 27 > b.length || b.toString('latin1', at, at + 4) !== 'OggS' || b[at + 4] !== 0) return undefined;
  const segments = b[at + 26];
  if (at + 27 + segments > b.length) return undefined;
  return { granule: b.readBigInt64LE(at + 6), serial: b.readUInt32LE(at + 14), body: at + 27 + segments };
}

/** The last page of the stream that carries a granule position (-1 means no packet ends on that page). */
function lastGranule(b: Buffer, serial: number): bigint | undefined {
  for (let at = b.lastIndexOf('OggS'); at >= 0; at = at > 0 ? b.lastIndexOf('OggS', at - 1) : -1) {
    const page = pageAt(b, at);
    if (page && page.serial === serial && page.granule >= 0n) return page.granule;
  }
  return undefined;
}

/** The codec of the first packet: its rate, channels and how to turn the last granule into samples. */
function codecOf(b: Buffer, at: number): { format: string; sampleRate: number; channels: number; preSkip: number } | undefined {
  const magic = b.toString('latin1', at, at + 8);
  // Opus always decodes at 48 kHz (the header's rate is only the source's); the granule counts 48 kHz samples.
  if (magic === 'OpusHead' && at + 19 <= b.length) return { format: 'opus', sampleRate: 48000, channels: b[at + 9], preSkip: b.readUInt16LE(at + 10) };
  if (magic.slice(1, 7) === 'vorbis' && b[at] === 1 && at + 16 <= b.length) {
    return { format: 'ogg', sampleRate: b.readUInt32LE(at + 12), channels: b[at + 11], preSkip: 0 };
  }
  // Ogg FLAC: 0x7F "FLAC", version, header count, "fLaC", then the STREAMINFO block's 4-byte header.
  if (magic.slice(0, 5) === '\x7fFLAC') {
    const info = streamInfo(b, at + 17);
    if (info?.sampleRate) return { format: 'ogg', sampleRate: info.sampleRate, channels: info.channels ?? 0, preSkip: 0 };
  }
  return undefined;
}

/** Ogg (Opus, Vorbis, FLAC): the duration is the last page's granule position, less Opus's pre-skip, over the rate. */
export function parseOgg(b: Buffer): MediaInfo | undefined {
  const first = pageAt(b, 0);
  if (!first) return undefined;
  const codec = codecOf(b, first.body);
  if (!codec) return { format: 'ogg' };
  const info: MediaInfo = { format: codec.format, sampleRate: codec.sampleRate, channels: codec.channels || undefined };
  const granule = lastGranule(b, first.serial);
  if (granule !== undefined && codec.sampleRate > 0) info.durationMs = (Math.max(0, Number(granule) - codec.preSkip) / codec.sampleRate) * 1000;
  return info;
}

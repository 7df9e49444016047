import type { MediaInfo } from '@talon/media';
import { streamInfo } from './flac.ts';

interface Page {
  granule: bigint;
  serial: number;
  /** Where the page's first packet starts. */
  body: number;
  /** Its lacing values: a value under 255 ends a packet. */
  lacing: Buffer;
}

function pageAt(b: Buffer, at: number): Page | undefined {
  if (at + 27 > b.length || b.toString('latin1', at, at + 4) !== 'OggS' || b[at + 4] !== 0) return undefined;
  const segments = b[at + 26];
  if (at + 27 + segments > b.length) return undefined;
  return { granule: b.readBigInt64LE(at + 6), serial: b.readUInt32LE(at + 14), body: at + 27 + segments, lacing: b.subarray(at + 27, at + 27 + segments) };
}

/**
 * Calls `each` with the start and length (its bytes on its first page) of every packet of one stream, page by page
 * (past damage, to the next page's capture pattern).
 */
function eachPacket(b: Buffer, serial: number, each: (start: number, length: number) => void): void {
  for (let at = 0; at >= 0 && at < b.length;) {
    const page = pageAt(b, at);
    if (!page) {
      at = b.indexOf('OggS', at + 1);
      continue;
    }
    // A page flagged as continued starts with the rest of the previous page's last packet.
    let open = (b[at + 5] & 1) === 1;
    let offset = page.body;
    let start = offset;
    for (const value of page.lacing) {
      if (!open) start = offset;
      offset += value;
      open = value === 255;
      if (!open && serial === page.serial) each(start, offset - start);
    }
    if (open && serial === page.serial) each(start, offset - start);
    at = offset;
  }
}

/** Samples at 48 kHz of one Opus packet, from its TOC byte (RFC 6716 §3.1): the frame size times the frames. */
function opusSamples(b: Buffer, start: number, length: number): number {
  if (length === 0) return 0;
  const toc = b[start];
  const config = toc >> 3;
  const frameMs = config < 12 ? [10, 20, 40, 60][config % 4] : config < 16 ? [10, 20][config % 2] : [2.5, 5, 10, 20][config % 4];
  const code = toc & 3;
  const frames = code === 0 ? 1 : code < 3 ? 2 : length >= 2 ? b[start + 1] & 0x3f : 48;
  return Math.min(frames * frameMs * 48, 5760);
}

/**
 * The most samples the stream's packets can decode to: for Opus their TOC bytes say exactly; Vorbis (half its
 * largest block) and FLAC frames are bounded per packet. The granule is a number a forger sets; the packets are there.
 */
function packetSamples(b: Buffer, serial: number, codec: Codec): number {
  let total = 0;
  let index = 0;
  eachPacket(b, serial, (start, length) => {
    // Opus's first two packets are its ID and comment headers.
    if (codec.codec === 'opus') total += index++ < 2 ? 0 : opusSamples(b, start, length);
    else total += codec.codec === 'vorbis' ? 4096 : 65535;
  });
  return total;
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
interface Codec {
  format: string;
  codec: 'opus' | 'vorbis' | 'flac';
  sampleRate: number;
  channels: number;
  preSkip: number;
}

function codecOf(b: Buffer, at: number): Codec | undefined {
  const magic = b.toString('latin1', at, at + 8);
  // Opus always decodes at 48 kHz (the header's rate is only the source's); the granule counts 48 kHz samples.
  if (magic === 'OpusHead' && at + 19 <= b.length)
    return { format: 'opus', codec: 'opus', sampleRate: 48000, channels: b[at + 9], preSkip: b.readUInt16LE(at + 10) };
  if (magic.slice(1, 7) === 'vorbis' && b[at] === 1 && at + 16 <= b.length) {
    return { format: 'ogg', codec: 'vorbis', sampleRate: b.readUInt32LE(at + 12), channels: b[at + 11], preSkip: 0 };
  }
  // Ogg FLAC: 0x7F "FLAC", version, header count, "fLaC", then the STREAMINFO block's 4-byte header.
  if (magic.slice(0, 5) === '\x7fFLAC') {
    const info = streamInfo(b, at + 17);
    if (info?.sampleRate) return { format: 'ogg', codec: 'flac', sampleRate: info.sampleRate, channels: info.channels ?? 0, preSkip: 0 };
  }
  return undefined;
}

/** Ogg (Opus, Vorbis, FLAC): the duration is the last page's granule position, less Opus's pre-skip, over the rate (bounded by the packets). */
export function parseOgg(b: Buffer): MediaInfo | undefined {
  const first = pageAt(b, 0);
  if (!first) return undefined;
  const codec = codecOf(b, first.body);
  if (!codec) return { format: 'ogg' };
  const info: MediaInfo = { format: codec.format, sampleRate: codec.sampleRate, channels: codec.channels || undefined };
  const granule = lastGranule(b, first.serial);
  if (granule === undefined || codec.sampleRate <= 0) return info;
  const most = packetSamples(b, first.serial, codec);
  info.durationMs = (Math.min(Math.max(0, Number(granule) - codec.preSkip), most) / codec.sampleRate) * 1000;
  return info;
}

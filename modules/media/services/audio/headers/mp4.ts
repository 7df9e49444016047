import type { MediaInfo } from '@talon/media';

interface Box {
  type: string;
  /** Where the box's content starts and ends. */
  start: number;
  end: number;
}

/** The boxes between start and end (ISO BMFF: a 32-bit size, 1 = a 64-bit size follows, 0 = to the end). */
function boxes(b: Buffer, start: number, end: number): Box[] {
  const found: Box[] = [];
  for (let at = start; at + 8 <= end;) {
    let size = b.readUInt32BE(at);
    let header = 8;
    if (size === 1 && at + 16 <= end) {
      size = Number(b.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header) break;
    found.push({ type: b.toString('latin1', at + 4, at + 8), start: at + header, end: Math.min(end, at + size) });
    at += size;
  }
  return found;
}

const child = (b: Buffer, box: Box | undefined, type: string) => (box ? boxes(b, box.start, box.end).find((c) => c.type === type) : undefined);

/** mvhd: the presentation's duration in its own timescale (version 1 has 64-bit times). */
function movieDuration(b: Buffer, mvhd: Box): number | undefined {
  const v1 = b[mvhd.start] === 1;
  const scaleAt = mvhd.start + (v1 ? 20 : 12);
  if (scaleAt + (v1 ? 12 : 8) > mvhd.end) return undefined;
  const scale = b.readUInt32BE(scaleAt);
  const duration = v1 ? Number(b.readBigUInt64BE(scaleAt + 4)) : b.readUInt32BE(scaleAt + 4);
  return scale > 0 ? (duration / scale) * 1000 : undefined;
}

/** One track: the handler says video or sound; tkhd holds a video's size, stsd's sample entry an audio's rate. */
function readTrack(b: Buffer, trak: Box, info: MediaInfo): boolean {
  const mdia = child(b, trak, 'mdia');
  const hdlr = child(b, mdia, 'hdlr');
  const handler = hdlr ? b.toString('latin1', hdlr.start + 8, hdlr.start + 12) : '';
  if (handler === 'vide') {
    const tkhd = child(b, trak, 'tkhd');
    const at = tkhd ? tkhd.start + (b[tkhd.start] === 1 ? 88 : 76) : 0;
    if (tkhd && at + 8 <= tkhd.end) {
      info.width = b.readUInt32BE(at) >>> 16;
      info.height = b.readUInt32BE(at + 4) >>> 16;
    }
    return true;
  }
  if (handler === 'soun' && info.sampleRate === undefined) {
    const stsd = child(b, child(b, child(b, mdia, 'minf'), 'stbl'), 'stsd');
    // stsd: version/flags, entry count, then the first sample entry (size, type, 6 reserved, ref index, 8 reserved…).
    const entry = stsd ? stsd.start + 8 : 0;
    if (stsd && entry + 36 <= stsd.end) {
      info.sampleRate = b.readUInt16BE(entry + 32);
      // AAC's entry says 2 channels whatever the stream has (the real count is in its decoder config): left out.
      if (b.toString('latin1', entry + 4, entry + 8) !== 'mp4a') info.channels = b.readUInt16BE(entry + 24);
    }
  }
  return false;
}

/** MP4 / M4A / MOV: the duration from mvhd, a video track's size, an audio track's rate and channels. */
export function parseMp4(b: Buffer): MediaInfo | undefined {
  if (b.length < 12 || b.toString('latin1', 4, 8) !== 'ftyp') return undefined;
  const top = boxes(b, 0, b.length);
  const brand = b.toString('latin1', 8, 12);
  const info: MediaInfo = { format: brand === 'M4A ' || brand === 'M4B ' ? 'm4a' : 'mp4' };
  const moov = top.find((box) => box.type === 'moov');
  if (!moov) return info;
  const inner = boxes(b, moov.start, moov.end);
  const mvhd = inner.find((box) => box.type === 'mvhd');
  if (mvhd) info.durationMs = movieDuration(b, mvhd);
  let video = false;
  for (const trak of inner.filter((box) => box.type === 'trak')) video = readTrack(b, trak, info) || video;
  // An MP4 with only sound is an M4A whatever its brand says (ffmpeg's mp4 muxer writes 'isom').
  if (!video && info.sampleRate !== undefined) info.format = 'm4a';
  return info;
}

import type { MediaInfo } from '@talon/media';

function png(b: Buffer): MediaInfo | undefined {
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.readUInt32BE(4) !== 0x0d0a1a0a) return undefined;
  return { format: 'png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

/** JPEG: the segments are walked to the first start-of-frame (SOF0–SOF15 but DHT C4, JPG C8 and DAC CC). */
function jpeg(b: Buffer): MediaInfo | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  for (let at = 2; at + 9 <= b.length;) {
    if (b[at] !== 0xff) return { format: 'jpeg' };
    const marker = b[at + 1];
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { format: 'jpeg', height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) };
    }
    at += 2 + b.readUInt16BE(at + 2);
  }
  return { format: 'jpeg' };
}

function gif(b: Buffer): MediaInfo | undefined {
  if (b.length < 10 || b.toString('latin1', 0, 4) !== 'GIF8') return undefined;
  return { format: 'gif', width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
}

/** WebP: lossy (VP8), lossless (VP8L) or extended (VP8X) each store the size their own way. */
function webp(b: Buffer): MediaInfo | undefined {
  if (b.length < 30 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WEBP') return undefined;
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { format: 'webp', width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  if (chunk === 'VP8 ') return { format: 'webp', width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = b.readUInt32LE(21);
    return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  return { format: 'webp' };
}

export function parseImage(b: Buffer): MediaInfo | undefined {
  return png(b) ?? jpeg(b) ?? gif(b) ?? webp(b);
}

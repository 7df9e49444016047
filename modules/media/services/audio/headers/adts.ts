import type { MediaInfo } from '@talon/media';

const RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

/**
 * AAC in ADTS frames: each frame says its length and how many 1024-sample blocks it holds, so the frames are walked
 * and counted. ADTS cannot say how many priming samples the encoder added (1024 for most), so the figure is the
 * decoder's, up to one frame longer than the sound.
 */
export function parseAdts(b: Buffer): MediaInfo | undefined {
  if (b.length < 7 || b[0] !== 0xff || (b[1] & 0xf6) !== 0xf0) return undefined;
  const rateIndex = (b[2] >> 2) & 0x0f;
  const sampleRate = RATES[rateIndex];
  if (!sampleRate) return undefined;
  const channels = ((b[2] & 1) << 2) | (b[3] >> 6);
  let blocks = 0;
  for (let at = 0; at + 7 <= b.length && b[at] === 0xff && (b[at + 1] & 0xf6) === 0xf0;) {
    const length = ((b[at + 3] & 0x03) << 11) | (b[at + 4] << 3) | (b[at + 5] >> 5);
    if (length < 7 || at + length > b.length) break;
    blocks += (b[at + 6] & 0x03) + 1;
    at += length;
  }
  return { format: 'aac', sampleRate, channels: channels || undefined, durationMs: ((blocks * 1024) / sampleRate) * 1000 };
}

/**
 * What ffmpeg and ffprobe may be given: only bytes whose own header says they are one of these formats, each opened
 * with its one demuxer (`-f`) and only the file protocol. Left to probe the input itself, ffmpeg would read anything
 * it knows: an HLS playlist or a concat list naming /etc/... or a URL would be followed (an uploaded "audio" file
 * could read the host's files or reach the network).
 */
import type { MediaInfo } from '@talon/media';

/** Our format names (parseHeaders) → ffmpeg's demuxer. M4A and MP4 are ISO BMFF ('mov'); WebM is Matroska. */
const DEMUXERS: Record<string, string> = {
  wav: 'wav',
  mp3: 'mp3',
  ogg: 'ogg',
  opus: 'ogg',
  flac: 'flac',
  aac: 'aac',
  m4a: 'mov',
  mp4: 'mov',
  webm: 'matroska',
};

export const READABLE_FORMATS = 'wav, mp3, ogg/opus, flac, aac, m4a, mp4 or webm';

/** The input options that pin ffmpeg or ffprobe to that demuxer and to local files, or undefined when not allowed. */
export function inputOptions(info: MediaInfo | undefined): string[] | undefined {
  const demuxer = info && DEMUXERS[info.format];
  return demuxer ? ['-protocol_whitelist', 'file', '-f', demuxer] : undefined;
}

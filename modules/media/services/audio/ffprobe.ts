import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MediaInfo } from '@talon/media';
import { run, withTempDir } from './exec.ts';

interface FfprobeStream {
  codec_type?: string;
  codec_name?: string;
  sample_rate?: string;
  channels?: number;
  width?: number;
  height?: number;
}

interface FfprobeOutput {
  streams?: FfprobeStream[];
  format?: { format_name?: string; duration?: string };
}

/** ffprobe's demuxer names to ours: the first of its list, less "_pipe" (png_pipe); Ogg says its codec. */
function formatName(out: FfprobeOutput, audio: FfprobeStream | undefined, video: FfprobeStream | undefined): string {
  const name = out.format?.format_name ?? 'unknown';
  if (name === 'ogg') return audio?.codec_name === 'opus' ? 'opus' : 'ogg';
  if (name.startsWith('mov,mp4')) return video ? 'mp4' : 'm4a';
  if (name.startsWith('matroska')) return 'webm';
  if (name === 'image2' || name === 'jpeg_pipe') return video?.codec_name === 'png' ? 'png' : 'jpeg';
  return name.split(',')[0].replace(/_pipe$/, '');
}

/** What ffprobe reads from the bytes (written to a file: MP4 needs seeking, which a pipe cannot do); `input`: demuxers.ts. */
export async function ffprobeInfo(
  program: string,
  bytes: Buffer,
  input: string[],
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<MediaInfo | undefined> {
  return withTempDir(async (dir) => {
    const file = path.join(dir, 'input');
    await writeFile(file, bytes);
    const entries = 'stream=codec_type,codec_name,sample_rate,channels,width,height:format=format_name,duration';
    const result = await run(program, ['-v', 'error', ...input, '-print_format', 'json', '-show_entries', entries, file], {
      ...options,
      maxOutputBytes: 1024 * 1024,
    });
    if (result.code !== 0) return undefined;
    const out = JSON.parse(result.stdout.toString('utf8')) as FfprobeOutput;
    const audio = out.streams?.find((s) => s.codec_type === 'audio');
    const video = out.streams?.find((s) => s.codec_type === 'video');
    const info: MediaInfo = { format: formatName(out, audio, video) };
    const seconds = Number(out.format?.duration);
    if (Number.isFinite(seconds)) info.durationMs = seconds * 1000;
    if (audio?.sample_rate) info.sampleRate = Number(audio.sample_rate);
    if (audio?.channels) info.channels = audio.channels;
    if (video?.width && video.height) Object.assign(info, { width: video.width, height: video.height });
    return info;
  });
}

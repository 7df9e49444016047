/**
 * Results become files this service owns: stored through the upload store (which sniffs the type and refuses bytes
 * not of the kind), announced as media.generated. Audio is first converted to the format asked for where the provider
 * made another (ffmpeg; without it the audio is kept and its true format reported), then measured from the bytes.
 */
import type { StoredFile, UploadFiles } from '@talon/agents';
import type { AudioFormat, MediaDriverKit, MediaInfo, MediaKind, mediaEvents } from '@talon/media';
import type { EventChannel } from '@talon/module-sdk';
import type { Logger } from 'pino';

export interface ResultDeps {
  files: () => UploadFiles;
  kit: MediaDriverKit;
  events: EventChannel<typeof mediaEvents>;
  log: Logger;
}

export interface Origin {
  kind: MediaKind;
  provider: string;
  model: string;
  agentId?: string;
}

export async function storeFile(deps: ResultDeps, origin: Origin, bytes: Buffer, name: string): Promise<StoredFile> {
  const kind = origin.kind === 'image' ? 'image' : origin.kind === 'video' ? 'video' : 'audio';
  const file = await deps.files().saveGenerated({ kind, bytes, name, agentId: origin.agentId, source: { provider: origin.provider, model: origin.model } });
  deps.events.publish('media.generated', {
    kind: origin.kind,
    file_id: file.file_id,
    url: file.url,
    provider: origin.provider,
    model: origin.model,
    ...(origin.agentId ? { agent_id: origin.agentId } : {}),
  });
  return file;
}

/** The audio in the format asked for, when ffmpeg can make it; else as the provider made it. */
export async function inFormat(deps: ResultDeps, audio: Buffer, format: AudioFormat | undefined, signal: AbortSignal): Promise<Buffer> {
  if (!format) return audio;
  if (!deps.kit.which('ffmpeg')) {
    deps.log.info({ format }, 'ffmpeg is not installed: the audio is kept in the format the provider made');
    return audio;
  }
  // convert hands back what already is in the format unchanged; ffmpeg is killed when the call's time bound ends or
  // its client goes away.
  return deps.kit.convert(audio, format, { signal });
}

export interface StoredAudio {
  file: StoredFile;
  info: MediaInfo;
}

export async function storeAudio(deps: ResultDeps, origin: Origin, audio: Buffer, format: AudioFormat | undefined, signal: AbortSignal): Promise<StoredAudio> {
  const bytes = await inFormat(deps, audio, format, signal);
  const info = await deps.kit.probe(bytes, { signal });
  const file = await storeFile(deps, origin, bytes, `${origin.kind}-${origin.provider}`);
  return { file, info };
}

/** The format as the response names it: what the bytes are (an M4A is AAC). */
export function audioFormatName(info: MediaInfo): string {
  return info.format === 'm4a' ? 'aac' : info.format;
}

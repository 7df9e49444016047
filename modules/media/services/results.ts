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

/**
 * The audio in the format asked for, when ffmpeg can make it; else as the provider made it. Audio the provider made
 * that cannot be read or converted is the provider's failure (an outage, 502), not the caller's bad request.
 */
export async function inFormat(deps: ResultDeps, origin: Origin, audio: Buffer, format: AudioFormat | undefined, signal: AbortSignal): Promise<Buffer> {
  if (!format) return audio;
  if (!deps.kit.which('ffmpeg')) {
    deps.log.info({ format }, 'ffmpeg is not installed: the audio is kept in the format the provider made');
    return audio;
  }
  try {
    // convert hands back what already is in the format unchanged; ffmpeg is killed when the call's time bound ends
    // or its client goes away.
    return await deps.kit.convert(audio, format, { signal });
  } catch (err) {
    if (!deps.kit.isMediaError(err) || err.kind !== 'not_supported') throw err;
    throw deps.kit.error('outage', `the audio provider '${origin.provider}' made could not be converted to ${format}: ${err.message}`, {
      provider: origin.provider,
    });
  }
}

export interface StoredAudio {
  file: StoredFile;
  info: MediaInfo;
}

export async function storeAudio(deps: ResultDeps, origin: Origin, audio: Buffer, format: AudioFormat | undefined, signal: AbortSignal): Promise<StoredAudio> {
  const bytes = await inFormat(deps, origin, audio, format, signal);
  const info = await deps.kit.probe(bytes, { signal });
  const file = await storeFile(deps, origin, bytes, `${origin.kind}-${origin.provider}`);
  return { file, info };
}

/**
 * The format as the response names it: what the bytes are (an M4A is AAC), in the caller's word where both name the
 * same thing (`ogg` is asked for as Ogg/Opus, which probe calls opus).
 */
export function audioFormatName(info: MediaInfo, asked?: AudioFormat): string {
  if (info.format === 'm4a') return 'aac';
  if (info.format === 'opus' && asked === 'ogg') return 'ogg';
  return info.format;
}

/**
 * The media service (`media.service`): what the routes, the agents' tools and other modules call. Each call chooses
 * a driver (select.ts), runs it metered and time-bounded (calls.ts) and stores what it made as a file this service
 * owns (results.ts); video goes to the durable task store (video/). Errors are HttpErrors with the status to answer.
 */
import { HttpError, payloadTooLarge } from '@talon/module-sdk';
import type { Logger } from 'pino';
import type { StoredFile } from '@talon/agents';
import type { AudioResponse, ImageResponse, MediaCallMeta, MediaCapability, MediaDriver, MediaProviderView, MediaService } from '@talon/media';
import type { MediaConfig } from '../config.ts';
import { meteredCall, toHttpError, type CallHooks, type CallSpec } from './calls.ts';
import { state, type DriverRegistry } from './drivers.ts';
import { audioFormatName, storeAudio, storeFile, type Origin, type ResultDeps } from './results.ts';
import { chooseDriver, setupText } from './select.ts';
import type { VideoTasks } from './video/index.ts';

export interface MediaServiceDeps extends ResultDeps {
  registry: DriverRegistry;
  hooks: CallHooks;
  config: () => MediaConfig;
  /** The catalogue's env var of a provider. */
  keyOf: (provider: string) => string | undefined;
  video: VideoTasks;
  log: Logger;
}

/** A result with the files it stored: the agents' tools attach them to the reply. */
export interface Made<T> {
  response: T;
  files: StoredFile[];
}

/** The generating calls with their files (the tools' view of the service). */
export interface MediaCore {
  image(request: Parameters<MediaService['image']>[0], meta?: MediaCallMeta): Promise<Made<ImageResponse>>;
  speech(request: Parameters<MediaService['speech']>[0], meta?: MediaCallMeta): Promise<Made<AudioResponse>>;
  music(request: Parameters<MediaService['music']>[0], meta?: MediaCallMeta): Promise<Made<AudioResponse>>;
}

/** What a sniffed audio format is called when a driver is told its type. */
const AUDIO_TYPES: Record<string, string> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  aac: 'audio/aac',
  m4a: 'audio/mp4',
  mp4: 'audio/mp4',
  webm: 'audio/webm',
};

export function createMedia(deps: MediaServiceDeps): { service: MediaService; core: MediaCore } {
  const core = createCore(deps);
  const service: MediaService = {
    providers: () => providerViews(deps),
    image: async (request, meta) => (await core.image(request, meta)).response,
    speech: async (request, meta) => (await core.speech(request, meta)).response,
    music: async (request, meta) => (await core.music(request, meta)).response,
    transcribe: (request, meta) => transcribe(deps, request, meta),
    submitVideo: (request, meta) => submitVideo(deps, request, meta),
    video: (taskId) => deps.video.view(taskId),
    cancelVideo: (taskId) => deps.video.cancel(taskId),
    probe: (bytes) => deps.kit.probe(bytes),
    convertAudio: (bytes, to) => deps.kit.convert(bytes, to),
  };
  return { service, core };
}

const choose = (deps: MediaServiceDeps, capability: MediaCapability, provider?: string) =>
  chooseDriver(deps.registry, capability, provider, deps.keyOf, deps.log);

function spec(
  kind: CallSpec['kind'],
  unit: CallSpec['unit'],
  driver: MediaDriver,
  timeoutSecs: number,
  model: string | undefined,
  meta: MediaCallMeta = {},
): CallSpec {
  return { kind, unit, driver, model, agentId: meta.agentId, signal: meta.signal, timeoutMs: Math.round(timeoutSecs * 1000) };
}

function createCore(deps: MediaServiceDeps): MediaCore {
  const { config, log } = deps;
  return {
    async image(request, meta = {}) {
      const driver = choose(deps, 'ImageGeneration', request.provider);
      const { prompt, model, width, height } = request;
      const call = spec('image', 'images', driver, config().image_timeout_secs, model, meta);
      return meteredCall(deps.hooks, log, call, {
        call: (signal) => driver.generateImage!({ prompt, model, width, height, count: request.count ?? 1, signal }),
        measure: (made) => ({ units: made.images.length, model: made.model }),
        async finish(made) {
          const origin: Origin = { kind: 'image', provider: driver.name, model: made.model, agentId: meta.agentId };
          const files: StoredFile[] = [];
          for (const [i, bytes] of made.images.entries()) files.push(await storeFile(deps, origin, bytes, `image-${driver.name}-${i + 1}`));
          const images = files.map((f) => ({ url: f.url, file_id: f.file_id }));
          return { response: { images, model: made.model, provider: driver.name, revised_prompt: made.revisedPrompt ?? null }, files };
        },
      });
    },

    async speech(request, meta = {}) {
      const driver = choose(deps, 'TextToSpeech', request.provider);
      const { text, voice, format, speed, model, language } = request;
      const call = spec('speech', 'characters', driver, config().speech_timeout_secs, model, meta);
      return meteredCall(deps.hooks, log, call, {
        call: (signal) => driver.synthesize!({ text, voice, format, speed, model, language, signal }),
        measure: (made) => ({ units: [...text].length, model: made.model }),
        finish: (made, signal) =>
          audioResult(deps, { kind: 'speech', provider: driver.name, model: made.model, agentId: meta.agentId }, made.audio, format, signal),
      });
    },

    async music(request, meta = {}) {
      const driver = choose(deps, 'MusicGeneration', request.provider);
      const { prompt, lyrics, format, model } = request;
      const call = spec('music', 'songs', driver, config().music_timeout_secs, model, meta);
      return meteredCall(deps.hooks, log, call, {
        call: (signal) => driver.generateMusic!({ prompt, lyrics, instrumental: request.instrumental ?? false, format, model, signal }),
        measure: (made) => ({ units: 1, model: made.model }),
        finish: (made, signal) =>
          audioResult(deps, { kind: 'music', provider: driver.name, model: made.model, agentId: meta.agentId }, made.audio, format, signal),
      });
    },
  };
}

async function audioResult(
  deps: MediaServiceDeps,
  origin: Origin,
  audio: Buffer,
  format: Parameters<typeof storeAudio>[3],
  signal: AbortSignal,
): Promise<Made<AudioResponse>> {
  const { file, info } = await storeAudio(deps, origin, audio, format, signal);
  if (info.durationMs === undefined || info.sampleRate === undefined)
    deps.log.warn({ file_id: file.file_id, format: info.format }, 'the audio could not be measured');
  const response: AudioResponse = {
    url: file.url,
    file_id: file.file_id,
    format: audioFormatName(info, format),
    provider: origin.provider,
    model: origin.model,
    // Measured from the stored file; 0 where nothing could measure it, never an estimate.
    duration_ms: Math.round(info.durationMs ?? 0),
    sample_rate: info.sampleRate ?? 0,
  };
  return { response, files: [file] };
}

async function transcribe(deps: MediaServiceDeps, request: Parameters<MediaService['transcribe']>[0], meta: MediaCallMeta = {}) {
  const max = deps.config().max_transcribe_bytes;
  if (request.audio.length > max)
    throw payloadTooLarge(`file: the audio is ${request.audio.length} bytes, over the cap of ${max} ([media] max_transcribe_bytes)`);
  const info = await deps.kit.probe(request.audio, { signal: meta.signal });
  const contentType = AUDIO_TYPES[info.format];
  if (!contentType)
    throw new HttpError(415, `file: the body is not audio this service reads (found: ${info.format}); send wav, mp3, ogg/opus, flac, aac/m4a or webm`);
  const driver = choose(deps, 'Transcription', request.provider);
  const durationMs = Math.round(info.durationMs ?? 0);
  const call = spec('transcription', 'seconds', driver, deps.config().transcribe_timeout_secs, request.model, meta);
  return meteredCall(deps.hooks, deps.log, call, {
    call: (signal) => driver.transcribe!({ audio: request.audio, contentType, language: request.language, model: request.model, signal }),
    measure: (heard) => ({ units: durationMs / 1000, model: heard.model }),
    finish: async (heard) => ({ text: heard.text, provider: driver.name, model: heard.model, duration_ms: durationMs }),
  });
}

async function submitVideo(deps: MediaServiceDeps, request: Parameters<MediaService['submitVideo']>[0], meta: MediaCallMeta = {}) {
  const driver = choose(deps, 'VideoGeneration', request.provider);
  const refusal = await deps.hooks.beforeCall({ kind: 'video', provider: driver.name, model: request.model, agentId: meta.agentId });
  if (refusal) throw new HttpError(refusal.status, refusal.error);
  try {
    return await deps.video.submit(driver, { prompt: request.prompt, model: request.model, duration_secs: request.duration_secs }, meta);
  } catch (err) {
    if (meta.signal?.aborted) throw err;
    const failure = toHttpError(err, driver.name, undefined, deps.log);
    // A submit the provider refused is a call made; a task that ends is metered by the task store.
    // No model came back: the one asked for, else the provider's name (a record's model is never '').
    const model = request.model ?? driver.name;
    const record = { kind: 'video' as const, provider: driver.name, model, units: 0, unit: 'seconds' as const, agentId: meta.agentId };
    await deps.hooks.afterCall({ ...record, latencyMs: 0, ok: false, error: failure.message }).catch(() => undefined);
    throw failure;
  }
}

function providerViews(deps: MediaServiceDeps): MediaProviderView[] {
  return deps.registry.ordered().map((driver) => {
    const s = state(driver, deps.log);
    const setup = setupText(driver.name, s.setup, deps.keyOf);
    return { name: driver.name, configured: s.configured, capabilities: s.capabilities, ...(setup ? { setup } : {}) };
  });
}

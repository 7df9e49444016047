/**
 * Contract of the media module (`@talon/media`), in the shape of the LLM driver family: the driver interface each
 * `media-<name>` module implements and registers through `mediaHooks.drivers`, the kit drivers build on (errors,
 * provider keys and URLs, provider HTTP, safe downloads of provider-returned URLs, audio probing and conversion), the
 * service routes, tools and other modules call (channels convert voice notes through it), the metering hooks the usage
 * module taps, and the module's events. Drivers return bytes: the media module stores every result as a file this
 * service owns and answers with `/api/uploads/<file_id>`.
 */
import { AsyncParallelHook, AsyncSeriesBailHook, SyncWaterfallHook, defineEvents, defineHooks, payload, serviceRef } from '@talon/module-sdk';

// ------------------------------------------------------------------ capabilities and requests

/**
 * The spec's capability names, plus `Transcription` (ours, additive). A contract exports no values: the lists to
 * iterate are the media module's (services/formats.ts).
 */
export type MediaCapability = 'ImageGeneration' | 'TextToSpeech' | 'VideoGeneration' | 'MusicGeneration' | 'Transcription';

/** Audio formats a result may be asked in; conversion between them is the kit's `convert` (ffmpeg). */
export type AudioFormat = 'mp3' | 'wav' | 'opus' | 'ogg' | 'flac' | 'aac';

export interface ImageRequest {
  prompt: string;
  model?: string;
  width?: number;
  height?: number;
  /** 1–9. */
  count: number;
  signal: AbortSignal;
}

export interface ImageResult {
  /** The bytes of each image (a driver downloads a returned URL with kit.download). */
  images: Buffer[];
  model: string;
  revisedPrompt?: string | null;
}

export interface SpeechRequest {
  text: string;
  voice?: string;
  /** The format the caller wants; a driver may return another and the media module converts. */
  format?: AudioFormat;
  /** 0.25–4, 1 = normal. */
  speed?: number;
  model?: string;
  language?: string;
  signal: AbortSignal;
}

export interface MusicRequest {
  prompt?: string;
  lyrics?: string;
  instrumental: boolean;
  format?: AudioFormat;
  model?: string;
  signal: AbortSignal;
}

/** Speech or music: the audio as the provider made it. Duration and sample rate are measured from the bytes, not here. */
export interface AudioResult {
  audio: Buffer;
  model: string;
}

export interface TranscribeRequest {
  audio: Buffer;
  /** The sniffed type of `audio` ('audio/wav', 'audio/mpeg', 'audio/ogg'...). */
  contentType: string;
  language?: string;
  model?: string;
  signal: AbortSignal;
}

export interface TranscribeResult {
  text: string;
  model: string;
}

export interface VideoRequest {
  prompt: string;
  durationSecs?: number;
  model?: string;
  signal: AbortSignal;
}

export interface VideoSubmitted {
  /** The provider's own id of the task; the media module keeps it and answers with its own task_id. */
  providerTaskId: string;
  model: string;
}

export type VideoPoll =
  | { state: 'processing'; progress?: number }
  | { state: 'completed'; video: Buffer; width?: number; height?: number; durationSecs?: number; model: string }
  | { state: 'failed'; error: string };

// ------------------------------------------------------------------ the driver

/**
 * One media provider. A method is present for each capability the driver can have; `capabilities()` says which of
 * them this host and configuration offer now (media-local lists only what is installed). Keys and base URLs are read
 * on each call through the kit, so a key set through POST /api/providers/{name}/key counts at once.
 */
export interface MediaDriver {
  /** The provider's name, as in the model catalogue ('openai', 'gemini', 'elevenlabs', 'minimax', 'local'). */
  readonly name: string;
  capabilities(): MediaCapability[];
  /** Its key is set (or it needs none). */
  configured(): boolean;
  /** What to set or install for it or for a missing capability (the 422 message and GET /api/media/providers). */
  setupHint(): string;
  generateImage?(request: ImageRequest): Promise<ImageResult>;
  synthesize?(request: SpeechRequest): Promise<AudioResult>;
  transcribe?(request: TranscribeRequest): Promise<TranscribeResult>;
  generateMusic?(request: MusicRequest): Promise<AudioResult>;
  submitVideo?(request: VideoRequest): Promise<VideoSubmitted>;
  pollVideo?(providerTaskId: string, signal: AbortSignal): Promise<VideoPoll>;
  cancelVideo?(providerTaskId: string, signal: AbortSignal): Promise<void>;
}

export interface MediaDriverFactory {
  name: string;
  create(kit: MediaDriverKit): MediaDriver;
}

// ------------------------------------------------------------------ errors

/**
 * Why a media call failed, which decides the HTTP status: `refused` 400 (content filter, bad size: the provider's
 * reason), `not_supported` 400, `not_configured` 422, `rate_limited` 429 (with Retry-After), `outage` 502.
 */
export type MediaErrorKind = 'refused' | 'not_supported' | 'not_configured' | 'rate_limited' | 'outage';

/** A failed media call. Errors cross module bundles: tell one by `err.name === 'MediaError'`, never instanceof. */
export interface MediaError extends Error {
  readonly name: 'MediaError';
  readonly kind: MediaErrorKind;
  readonly provider?: string;
  readonly retryAfterMs?: number;
  /** The provider's HTTP status, when it answered. */
  readonly status?: number;
}

// ------------------------------------------------------------------ the kit

/** The key and base URL of a provider: the model catalogue's (env var or stored key; [provider_urls] or PUT .../url). */
export interface ProviderAccess {
  apiKey?: string;
  baseUrl?: string;
  envVar?: string;
}

export interface ProviderRequest {
  provider: string;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array | FormData;
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal;
}

export interface ProviderResponse {
  status: number;
  headers: Headers;
  body: Buffer;
  json<T = unknown>(): T;
}

/** What `probe` measured in a media file; absent fields were not found. */
export interface MediaInfo {
  /** 'mp3', 'wav', 'ogg', 'opus', 'flac', 'aac', 'mp4', 'webm', 'png'... */
  format: string;
  durationMs?: number;
  sampleRate?: number;
  channels?: number;
  width?: number;
  height?: number;
}

export interface MediaDriverKit {
  error(kind: MediaErrorKind, message: string, init?: { provider?: string; retryAfterMs?: number; status?: number }): MediaError;
  isMediaError(err: unknown): err is MediaError;
  provider(name: string): ProviderAccess;
  /**
   * A call to the provider's own API (its configured base URL): 429 → rate_limited with Retry-After, 5xx and network
   * errors → outage, 400/422 → refused with the provider's message, 401/403 → not_configured; the body capped.
   */
  request(request: ProviderRequest): Promise<ProviderResponse>;
  /**
   * A URL the provider returned (a result file), downloaded through the net module: https only (loopback only when
   * the URL's origin is the provider's configured base URL, for tests and self-hosted servers), SSRF rules, redirects
   * checked again, a size cap. `credentials` are sent only when the URL's origin is the provider's API origin.
   */
  download(
    provider: string,
    url: string,
    options: { maxBytes: number; timeoutMs: number; credentials?: Record<string, string>; signal: AbortSignal },
  ): Promise<Buffer>;
  /**
   * Duration, sample rate, size of audio, video or images: the headers, ffprobe where present for what they leave out.
   * `signal` (additive): ffprobe is killed when it aborts (the caller's time bound or its client gone).
   */
  probe(bytes: Buffer, options?: { signal?: AbortSignal }): Promise<MediaInfo>;
  /**
   * Audio to another format (ffmpeg); a refusal naming what to install when it is missing. `signal` (additive): ffmpeg
   * is killed when it aborts, and the call rejects with the signal's reason.
   */
  convert(
    bytes: Buffer,
    to: AudioFormat,
    options?: { sampleRate?: number; channels?: number; startSec?: number; maxSecs?: number; signal?: AbortSignal },
  ): Promise<Buffer>;
  /** The host's programs (flite, pocketsphinx, ffmpeg, ffprobe): their paths, looked up once. */
  which(program: string): string | undefined;
  /**
   * Runs a host program (a local engine) without a shell, its arguments never parsed, killed when `timeoutMs` is up or
   * `signal` aborts (additive). Resolves with its stdout; a non-zero exit, the time bound or output past
   * `maxOutputBytes` (64 MB) is an `outage` naming the program and its last line on stderr; an abort rejects with the
   * signal's reason.
   */
  run(program: string, args: string[], options: { timeoutMs: number; signal: AbortSignal; maxOutputBytes?: number }): Promise<Buffer>;
  /** A private temporary folder for one call (input and output files of a program), removed afterwards (additive). */
  withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T>;
}

// ------------------------------------------------------------------ the service (HTTP shapes)

export interface MediaProviderView {
  name: string;
  configured: boolean;
  capabilities: MediaCapability[];
  /** What to set or install (ours, additive). */
  setup?: string;
}

/** Who a call is for: metering, budgets and file ownership. */
export interface MediaCallMeta {
  agentId?: string;
  signal?: AbortSignal;
}

export interface ImageResponse {
  images: Array<{ url: string; file_id: string }>;
  model: string;
  provider: string;
  revised_prompt: string | null;
}

export interface AudioResponse {
  url: string;
  file_id: string;
  format: string;
  provider: string;
  model: string;
  duration_ms: number;
  sample_rate: number;
}

export interface TranscriptionResponse {
  text: string;
  provider: string;
  model: string;
  duration_ms: number;
}

export type VideoStatus = 'processing' | 'completed' | 'failed' | 'cancelled';

export interface VideoTaskView {
  status: VideoStatus;
  task_id: string;
  provider: string;
  progress?: number;
  result?: { file_url: string; file_id: string; width: number; height: number; duration_secs: number; provider: string; model: string };
  error?: string;
}

export interface MediaService {
  providers(): MediaProviderView[];
  image(
    request: { prompt: string; provider?: string; model?: string; width?: number; height?: number; count?: number },
    meta?: MediaCallMeta,
  ): Promise<ImageResponse>;
  speech(
    request: { text: string; voice?: string; format?: AudioFormat; speed?: number; provider?: string; model?: string; language?: string },
    meta?: MediaCallMeta,
  ): Promise<AudioResponse>;
  music(
    request: { prompt?: string; lyrics?: string; instrumental?: boolean; format?: AudioFormat; provider?: string; model?: string },
    meta?: MediaCallMeta,
  ): Promise<AudioResponse>;
  transcribe(request: { audio: Buffer; provider?: string; language?: string; model?: string }, meta?: MediaCallMeta): Promise<TranscriptionResponse>;
  submitVideo(
    request: { prompt: string; provider?: string; model?: string; duration_secs?: number },
    meta?: MediaCallMeta,
  ): Promise<{ task_id: string; provider: string }>;
  video(taskId: string): Promise<VideoTaskView | undefined>;
  cancelVideo(taskId: string): Promise<VideoTaskView | undefined>;
  probe(bytes: Buffer): Promise<MediaInfo>;
  /** One place for audio conversion: drivers, tools and channels (Telegram and WhatsApp voice notes are Ogg/Opus). */
  convertAudio(bytes: Buffer, to: AudioFormat): Promise<Buffer>;
}

export const mediaService = serviceRef<MediaService>('media.service');
export const mediaDriverKit = serviceRef<MediaDriverKit>('media.kit');

// ------------------------------------------------------------------ hooks and events

export type MediaKind = 'image' | 'speech' | 'music' | 'video' | 'transcription';
export type MediaUnit = 'images' | 'characters' | 'seconds' | 'songs';

export interface MediaCallCheck {
  kind: MediaKind;
  provider: string;
  model?: string;
  agentId?: string;
}

export interface MediaCallRecord {
  kind: MediaKind;
  provider: string;
  model: string;
  units: number;
  unit: MediaUnit;
  agentId?: string;
  taskId?: string;
  latencyMs: number;
  ok: boolean;
  error?: string;
}

export const mediaHooks = defineHooks('media.hooks', () => ({
  /** Driver modules register here: (list) => [...list, { name, create }]; the tap goes with the module's copy. */
  drivers: new SyncWaterfallHook<[MediaDriverFactory[]]>(['drivers']),
  /** Return a refusal ({status: 402 or 429, error}) to stop a call before the provider sees it (budgets). */
  beforeCall: new AsyncSeriesBailHook<[MediaCallCheck], { status: number; error: string } | undefined>(['call']),
  /** Every provider call that was made, successful or not (metering; video when its task ends). */
  afterCall: new AsyncParallelHook<[MediaCallRecord]>(['record']),
}));

export const mediaEvents = defineEvents('media', {
  /** A file was generated and stored. */
  'media.generated': payload<{ kind: MediaKind; file_id: string; url: string; provider: string; model: string; agent_id?: string }>(),
  /** A video task changed: submitted, progress, completed (file_url), failed or cancelled (error). */
  'media.video_task': payload<{ task_id: string; provider: string; status: VideoStatus; progress?: number; file_url?: string; error?: string }>(),
});

/**
 * Veo video on the Gemini API: `:predictLongRunning` starts an operation whose name is the provider's task id; the
 * operation is read at `/v1beta/{name}` until `done`, then its sample's URI is downloaded with the key. That URI is
 * on the API's origin and needs the key, so it can never be handed to a client: the media module stores the bytes.
 */
import type { MediaDriverKit, VideoPoll, VideoRequest, VideoSubmitted } from '@talon/media';
import { geminiApi, PROVIDER, type CallOptions } from './wire.ts';

export const DEFAULT_VIDEO_MODEL = 'veo-3.1-generate-preview';
const CALL = { timeoutMs: 60_000, maxBytes: 4 * 1024 * 1024 };
const DOWNLOAD = { timeoutMs: 600_000, maxBytes: 100 * 1024 * 1024 };
/**
 * What an operation name may look like ('models/veo-3.1-generate-preview/operations/abc', 'operations/abc'): it is
 * put into a URL that carries the key, so anything else (`..`, `?`, `#`, another host) is refused before it is used.
 */
const OPERATION = /^(models\/[A-Za-z0-9._-]+\/)?operations\/[A-Za-z0-9._-]+$/;

interface Operation {
  name?: string;
  done?: boolean;
  error?: { code?: number; message?: string };
  response?: {
    generateVideoResponse?: {
      generatedSamples?: Array<{ video?: { uri?: string; encodedVideo?: string } }>;
      raiMediaFilteredReasons?: string[];
    };
  };
}

/** Veo 3 makes 4, 6 or 8 seconds; Veo 2 5 to 8. The shortest length that is at least the one asked for. */
function durationFor(model: string, secs: number | undefined): number | undefined {
  if (secs === undefined) return undefined;
  if (model.startsWith('veo-2')) return Math.min(8, Math.max(5, Math.ceil(secs)));
  return [4, 6, 8].find((d) => d >= secs) ?? 8;
}

function operationName(kit: MediaDriverKit, name: unknown): string {
  if (typeof name === 'string' && OPERATION.test(name)) return name;
  throw kit.error('outage', `provider '${PROVIDER}' returned an invalid operation name`, { provider: PROVIDER });
}

export async function submitVideo(kit: MediaDriverKit, request: VideoRequest): Promise<VideoSubmitted> {
  const api = geminiApi(kit);
  const model = request.model ?? DEFAULT_VIDEO_MODEL;
  const parameters = { durationSeconds: durationFor(model, request.durationSecs) };
  const operation = await api.post<Operation>(
    `/v1beta/models/${encodeURIComponent(model)}:predictLongRunning`,
    { instances: [{ prompt: request.prompt }], parameters },
    { ...CALL, signal: request.signal },
  );
  return { providerTaskId: operationName(kit, operation.name), model };
}

export async function pollVideo(kit: MediaDriverKit, providerTaskId: string, signal: AbortSignal): Promise<VideoPoll> {
  const api = geminiApi(kit);
  const name = operationName(kit, providerTaskId);
  const operation = await api.get<Operation>(`/v1beta/${name}`, { ...CALL, signal });
  if (!operation.done) return { state: 'processing' };
  if (operation.error) return { state: 'failed', error: operation.error.message || `operation failed (code ${operation.error.code ?? '?'})` };
  const result = operation.response?.generateVideoResponse;
  const video = result?.generatedSamples?.find((s) => s.video?.uri || s.video?.encodedVideo)?.video;
  const model = /^models\/([^/]+)\//.exec(name)?.[1] ?? DEFAULT_VIDEO_MODEL;
  if (video?.encodedVideo) return { state: 'completed', video: Buffer.from(video.encodedVideo, 'base64'), model };
  if (video?.uri) return { state: 'completed', video: await download(kit, video.uri, api.credentials, signal), model };
  const filtered = result?.raiMediaFilteredReasons?.join('; ');
  return { state: 'failed', error: filtered ? `refused by the content filter: ${filtered}` : 'the operation finished with no video' };
}

function download(kit: MediaDriverKit, uri: string, credentials: Record<string, string>, signal: AbortSignal): Promise<Buffer> {
  // The kit sends the key only to the API's own origin, so a URI elsewhere gets none (nor does a redirect there).
  const options: CallOptions & { credentials: Record<string, string> } = { ...DOWNLOAD, credentials, signal };
  return kit.download(PROVIDER, uri, options);
}

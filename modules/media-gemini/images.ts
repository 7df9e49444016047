/**
 * Images from the Gemini API. Gemini image models (the default) answer `:generateContent` with the image as an
 * inlineData part, one image per call; Imagen models (`imagen-*`, still served on some endpoints) answer `:predict`
 * with `predictions[].bytesBase64Encoded`, a filtered image carrying `raiFilteredReason` instead. Either way an answer
 * with no image is the provider's refusal, passed on with its reason.
 */
import type { ImageRequest, ImageResult, MediaDriverKit } from '@talon/media';
import { aspectRatio, geminiApi, PROVIDER, type CallOptions, type GeminiApi } from './wire.ts';

/** Gemini's GA image model (Imagen 4 on the Gemini API was shut down on 2026-08-17). */
export const DEFAULT_IMAGE_MODEL = 'gemini-3.1-flash-image';
const GEMINI_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'] as const;
const IMAGEN_RATIOS = ['1:1', '3:4', '4:3', '9:16', '16:9'] as const;
const LIMITS = { timeoutMs: 300_000, maxBytes: 128 * 1024 * 1024 };

interface InlineData {
  mimeType?: string;
  data?: string;
}

interface GenerateContentResponse {
  candidates?: Array<{ content?: { parts?: Array<{ text?: string; inlineData?: InlineData }> }; finishReason?: string; finishMessage?: string }>;
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string };
}

interface PredictResponse {
  predictions?: Array<{ bytesBase64Encoded?: string; mimeType?: string; raiFilteredReason?: string }>;
}

export async function generateImage(kit: MediaDriverKit, request: ImageRequest): Promise<ImageResult> {
  const api = geminiApi(kit);
  const model = request.model ?? DEFAULT_IMAGE_MODEL;
  const options: CallOptions = { ...LIMITS, signal: request.signal };
  const images = model.startsWith('imagen-') ? await imagen(kit, api, model, request, options) : await native(kit, api, model, request, options);
  return { images, model, revisedPrompt: null };
}

const modelPath = (model: string, method: string) => `/v1beta/models/${encodeURIComponent(model)}:${method}`;

async function imagen(kit: MediaDriverKit, api: GeminiApi, model: string, request: ImageRequest, options: CallOptions): Promise<Buffer[]> {
  const parameters = { sampleCount: request.count, aspectRatio: aspectRatio(request.width, request.height, IMAGEN_RATIOS), includeRaiReason: true };
  const answer = await api.post<PredictResponse>(modelPath(model, 'predict'), { instances: [{ prompt: request.prompt }], parameters }, options);
  const predictions = answer.predictions ?? [];
  const images = predictions.flatMap((p) => (p.bytesBase64Encoded ? [Buffer.from(p.bytesBase64Encoded, 'base64')] : []));
  if (images.length) return images;
  const reasons = predictions.flatMap((p) => (p.raiFilteredReason ? [p.raiFilteredReason] : []));
  throw noImage(kit, reasons.join('; '));
}

async function native(kit: MediaDriverKit, api: GeminiApi, model: string, request: ImageRequest, options: CallOptions): Promise<Buffer[]> {
  const ratio = aspectRatio(request.width, request.height, GEMINI_RATIOS);
  const body = {
    contents: [{ role: 'user', parts: [{ text: request.prompt }] }],
    generationConfig: { responseModalities: ['IMAGE'], ...(ratio ? { imageConfig: { aspectRatio: ratio } } : {}) },
  };
  // An image model makes one image per call: `count` calls, side by side.
  const answers = await Promise.all(
    Array.from({ length: request.count }, () => api.post<GenerateContentResponse>(modelPath(model, 'generateContent'), body, options)),
  );
  const images = answers.flatMap(inlineImages);
  if (images.length) return images.slice(0, request.count);
  throw noImage(kit, answers.map(refusalReason).find(Boolean) ?? '');
}

function inlineImages(answer: GenerateContentResponse): Buffer[] {
  const parts = answer.candidates?.flatMap((c) => c.content?.parts ?? []) ?? [];
  return parts.flatMap((p) => (p.inlineData?.data && p.inlineData.mimeType?.startsWith('image/') ? [Buffer.from(p.inlineData.data, 'base64')] : []));
}

/** Why an answer has no image: a blocked prompt, a stopped candidate (IMAGE_SAFETY, NO_IMAGE...) or the model's words. */
function refusalReason(answer: GenerateContentResponse): string {
  const blocked = answer.promptFeedback;
  if (blocked?.blockReason) return [blocked.blockReason, blocked.blockReasonMessage].filter(Boolean).join(': ');
  const candidate = answer.candidates?.[0];
  const said = candidate?.content?.parts
    ?.map((p) => p.text ?? '')
    .join(' ')
    .trim();
  const stopped = candidate?.finishReason && candidate.finishReason !== 'STOP' ? candidate.finishReason : undefined;
  return [stopped, candidate?.finishMessage ?? said].filter(Boolean).join(': ');
}

function noImage(kit: MediaDriverKit, reason: string) {
  if (!reason) return kit.error('outage', `provider '${PROVIDER}' answered with no image`, { provider: PROVIDER });
  return kit.error('refused', `provider '${PROVIDER}' made no image: ${reason}`, { provider: PROVIDER });
}

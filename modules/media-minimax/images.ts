/**
 * image-01 at `/image_generation`: an aspect ratio or an exact width and height (both in 512–2048, multiples of 8;
 * MiniMax takes the ratio first, so only one is sent), up to 9 images, asked for as base64. An answer with URLs
 * instead (older models, proxies) is downloaded through the kit, with no key: the URLs are on MiniMax's CDN.
 */
import type { ImageRequest, ImageResult, MediaDriverKit } from '@talon/media';
import { minimaxApi, PROVIDER, type Envelope } from './wire.ts';

export const DEFAULT_IMAGE_MODEL = 'image-01';
const RATIOS = ['1:1', '16:9', '4:3', '3:2', '2:3', '3:4', '9:16', '21:9'] as const;
const CALL = { timeoutMs: 300_000, maxBytes: 128 * 1024 * 1024 };
const DOWNLOAD = { timeoutMs: 120_000, maxBytes: 32 * 1024 * 1024 };

interface ImageAnswer extends Envelope {
  data?: { image_base64?: string[]; image_urls?: string[] };
  metadata?: { failed_count?: string | number; success_count?: string | number };
}

const exact = (v: number | undefined): v is number => v !== undefined && Number.isInteger(v) && v >= 512 && v <= 2048 && v % 8 === 0;

/** The closest of MiniMax's ratios to width:height. */
function nearestRatio(width: number, height: number): string {
  const distance = (ratio: string) => {
    const [w, h] = ratio.split(':').map(Number);
    return Math.abs(Math.log(w / h) - Math.log(width / height));
  };
  return RATIOS.reduce((best, r) => (distance(r) < distance(best) ? r : best));
}

function size(request: ImageRequest): Record<string, unknown> {
  const { width, height } = request;
  if (exact(width) && exact(height)) return { width, height };
  return width && height ? { aspect_ratio: nearestRatio(width, height) } : {};
}

export async function generateImage(kit: MediaDriverKit, request: ImageRequest): Promise<ImageResult> {
  const model = request.model ?? DEFAULT_IMAGE_MODEL;
  const body = { model, prompt: request.prompt, n: request.count, response_format: 'base64', prompt_optimizer: false, ...size(request) };
  const answer = await minimaxApi(kit).post<ImageAnswer>('/image_generation', body, { ...CALL, signal: request.signal });
  const encoded = answer.data?.image_base64 ?? [];
  const urls = answer.data?.image_urls ?? [];
  const images = encoded.length
    ? encoded.map((b64) => Buffer.from(b64, 'base64'))
    : await Promise.all(urls.map((url) => kit.download(PROVIDER, url, { ...DOWNLOAD, signal: request.signal })));
  if (!images.length) {
    const failed = Number(answer.metadata?.failed_count ?? 0);
    if (failed > 0) throw kit.error('refused', `provider '${PROVIDER}' made no image: ${failed} filtered`, { provider: PROVIDER });
    throw kit.error('outage', `provider '${PROVIDER}' answered with no image`, { provider: PROVIDER });
  }
  return { images, model, revisedPrompt: null };
}

/**
 * Images through `POST {base}/images/generations`. gpt-image models always answer base64 and refuse the
 * `response_format` parameter (400 "Unknown parameter"), so it is sent only to dall-e models, which would otherwise
 * answer with expiring URLs. Other compatible servers (Together, self-hosted) may still answer URLs: those are
 * downloaded through the kit (the net module's SSRF rules), never handed to the client.
 */
import type { ImageRequest, ImageResult } from '@talon/media';
import { CALL_TIMEOUT_MS, PROVIDER, postOpenai } from './access.ts';
import type { OpenaiCall } from './driver.ts';

/** The JSON answer holds up to nine base64 images of a few MB each. */
const ANSWER_MAX_BYTES = 100 * 1024 * 1024;
const IMAGE_MAX_BYTES = 20 * 1024 * 1024;

interface ImageItem {
  b64_json?: string;
  url?: string;
  revised_prompt?: string;
}

/** "WxH"; one side given makes a square; none lets the provider choose. */
export function sizeParam(width?: number, height?: number): string | undefined {
  const w = width ?? height;
  const h = height ?? width;
  return w === undefined || h === undefined ? undefined : `${Math.round(w)}x${Math.round(h)}`;
}

function imagesBody(model: string, prompt: string, n: number, size: string | undefined): Record<string, unknown> {
  return {
    model,
    prompt,
    n,
    ...(size === undefined ? {} : { size }),
    ...(model.startsWith('dall-e') ? { response_format: 'b64_json' } : {}),
  };
}

async function imageBytes({ kit }: OpenaiCall, item: ImageItem, signal: AbortSignal): Promise<Buffer> {
  if (item.b64_json) return Buffer.from(item.b64_json, 'base64');
  if (item.url) return kit.download(PROVIDER, item.url, { maxBytes: IMAGE_MAX_BYTES, timeoutMs: CALL_TIMEOUT_MS, signal });
  throw kit.error('outage', 'OpenAI answered an image with neither b64_json nor url', { provider: PROVIDER });
}

export async function generateImage(call: OpenaiCall, request: ImageRequest): Promise<ImageResult> {
  const model = request.model ?? call.config.image_model;
  const size = sizeParam(request.width, request.height);
  // dall-e-3 makes one image per request (it refuses n > 1): ask it once per image.
  const batches = model === 'dall-e-3' ? Array.from({ length: request.count }, () => 1) : [request.count];
  const images: Buffer[] = [];
  let revisedPrompt: string | null = null;
  for (const n of batches) {
    const body = imagesBody(model, request.prompt, n, size);
    const answer = await postOpenai(call.kit, call.access, '/images/generations', body, { maxBytes: ANSWER_MAX_BYTES, signal: request.signal });
    const items = answer.json<{ data?: ImageItem[] }>().data;
    for (const item of Array.isArray(items) ? items : []) {
      images.push(await imageBytes(call, item, request.signal));
      revisedPrompt ??= item.revised_prompt ?? null;
    }
  }
  if (images.length === 0) throw call.kit.error('outage', 'OpenAI answered with no image', { provider: PROVIDER });
  return { images, model, revisedPrompt };
}

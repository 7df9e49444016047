/** The Gemini media driver: images and Veo video; the key and base URL are the catalogue's, read on every call. */
import type { MediaDriver, MediaDriverKit } from '@talon/media';
import { generateImage } from './images.ts';
import { pollVideo, submitVideo } from './video.ts';
import { PROVIDER, setupHint } from './wire.ts';

export function geminiDriver(kit: MediaDriverKit): MediaDriver {
  return {
    name: PROVIDER,
    capabilities: () => ['ImageGeneration', 'VideoGeneration'],
    configured: () => Boolean(kit.provider(PROVIDER).apiKey),
    setupHint: () => setupHint(kit),
    generateImage: (request) => generateImage(kit, request),
    submitVideo: (request) => submitVideo(kit, request),
    pollVideo: (providerTaskId, signal) => pollVideo(kit, providerTaskId, signal),
  };
}

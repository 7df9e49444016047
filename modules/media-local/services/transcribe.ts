import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MediaDriverKit, TranscribeRequest, TranscribeResult } from '@talon/media';
import type { Host } from './host.ts';

export const TRANSCRIPTION_MODEL = 'pocketsphinx-en-us';

/**
 * English transcription with pocketsphinx_continuous and its en-US model: the audio is converted to the 16 kHz mono
 * 16-bit WAV it reads (a WAV that already is one needs no ffmpeg); each utterance it hears is a line of its output.
 */
export async function listen(kit: MediaDriverKit, host: Host, request: TranscribeRequest): Promise<TranscribeResult> {
  const { pocketsphinx, model } = host;
  if (!pocketsphinx || !model) {
    throw kit.error('not_supported', 'local transcription needs pocketsphinx and its en-US model: apt install pocketsphinx pocketsphinx-en-us ffmpeg', {
      provider: 'local',
    });
  }
  if (request.model !== undefined && request.model !== TRANSCRIPTION_MODEL) {
    throw kit.error('not_supported', `model: local transcription has the model ${TRANSCRIPTION_MODEL}`, { provider: 'local' });
  }
  if (request.language && !/^en\b/i.test(request.language)) {
    throw kit.error('not_supported', `language: local transcription knows English only, not '${request.language}'`, { provider: 'local' });
  }
  // The caller's signal carries its time bound: ffmpeg is killed with it, as pocketsphinx is.
  const wav = await kit.convert(request.audio, 'wav', { sampleRate: 16000, channels: 1, signal: request.signal });
  const seconds = ((await kit.probe(wav, { signal: request.signal })).durationMs ?? 0) / 1000;
  return kit.withTempDir(async (dir) => {
    const file = path.join(dir, 'input.wav');
    await writeFile(file, wav);
    // Measured: about a quarter of real time on two cores; the bound allows eight times that and a slow start.
    const args = ['-infile', file, '-hmm', model.hmm, '-lm', model.lm, '-dict', model.dict];
    const out = await kit.run(pocketsphinx, args, { timeoutMs: 60_000 + seconds * 2000, signal: request.signal, maxOutputBytes: 16 * 1024 * 1024 });
    const text = out
      .toString('utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .join(' ');
    return { text, model: TRANSCRIPTION_MODEL };
  });
}

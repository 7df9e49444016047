/** Transcription through `POST {base}/speech-to-text`, multipart: file, model_id, language_code. */
import type { MediaDriverKit, TranscribeRequest, TranscribeResult } from '@talon/media';
import { PROVIDER, postElevenlabs } from './access.ts';
import type { ElevenlabsConfig } from './config.ts';
import { languageCode } from './language.ts';

const MAX_BYTES = 8 * 1024 * 1024;

const EXTENSIONS: Record<string, string> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
  'audio/opus': 'ogg',
  'audio/flac': 'flac',
  'audio/webm': 'webm',
  'audio/mp4': 'm4a',
  'audio/aac': 'aac',
};

export async function transcribe(kit: MediaDriverKit, config: ElevenlabsConfig, request: TranscribeRequest): Promise<TranscribeResult> {
  const model = request.model ?? config.transcription_model;
  const type = request.contentType.split(';')[0].trim().toLowerCase();
  const form = new FormData();
  // ElevenLabs reads the format from the bytes; the file name only helps its logs.
  form.append('file', new Blob([new Uint8Array(request.audio)], { type }), `audio.${EXTENSIONS[type] ?? 'bin'}`);
  form.append('model_id', model);
  const language = languageCode(request.language);
  if (language) form.append('language_code', language);
  // The words only: no "(laughter)" or "(music)" tags in the text.
  form.append('tag_audio_events', 'false');
  const answer = await postElevenlabs(kit, {
    path: '/speech-to-text',
    body: form,
    accept: 'application/json',
    maxBytes: MAX_BYTES,
    signal: request.signal,
  });
  const { text } = answer.json<{ text?: unknown }>();
  if (typeof text !== 'string') throw kit.error('outage', 'ElevenLabs answered a transcription without text', { provider: PROVIDER });
  return { text: text.trim(), model };
}

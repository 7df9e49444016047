/**
 * Speech through `POST {base}/audio/speech` (JSON in, audio bytes out) and transcription through
 * `POST {base}/audio/transcriptions` (multipart: file, model, language).
 */
import type { AudioFormat, AudioResult, SpeechRequest, TranscribeRequest, TranscribeResult } from '@talon/media';
import { PROVIDER, postOpenai } from './access.ts';
import type { OpenaiCall } from './driver.ts';

const SPEECH_MAX_BYTES = 25 * 1024 * 1024;
const TRANSCRIPT_MAX_BYTES = 4 * 1024 * 1024;

/** Our formats as OpenAI's `response_format`; its `opus` is Ogg/Opus, which is also what `ogg` means here. */
export const SPEECH_FORMATS: Record<AudioFormat, string> = { mp3: 'mp3', wav: 'wav', flac: 'flac', aac: 'aac', opus: 'opus', ogg: 'opus' };

export async function synthesize(call: OpenaiCall, request: SpeechRequest): Promise<AudioResult> {
  const model = request.model ?? call.config.speech_model;
  const body = {
    model,
    input: request.text,
    voice: request.voice ?? call.config.voice,
    response_format: SPEECH_FORMATS[request.format ?? 'mp3'],
    ...(request.speed === undefined ? {} : { speed: request.speed }),
  };
  const answer = await postOpenai(call.kit, call.access, '/audio/speech', body, { maxBytes: SPEECH_MAX_BYTES, signal: request.signal, accept: 'audio/*' });
  if (answer.body.length === 0) throw call.kit.error('outage', 'OpenAI answered speech with no audio', { provider: PROVIDER });
  return { audio: answer.body, model };
}

/**
 * The upload's file extension, which OpenAI reads to tell the format (flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav,
 * webm); undefined for a type it does not take.
 */
function uploadExtension(contentType: string): string | undefined {
  const type = contentType.split(';')[0].trim().toLowerCase();
  const known: Record<string, string> = {
    'audio/wav': 'wav',
    'audio/x-wav': 'wav',
    'audio/wave': 'wav',
    'audio/mpeg': 'mp3',
    'audio/mp3': 'mp3',
    'audio/ogg': 'ogg',
    'audio/opus': 'ogg',
    'audio/flac': 'flac',
    'audio/x-flac': 'flac',
    'audio/webm': 'webm',
    'video/webm': 'webm',
    'audio/mp4': 'm4a',
    'audio/m4a': 'm4a',
    'audio/x-m4a': 'm4a',
    'video/mp4': 'mp4',
  };
  return known[type];
}

/** ISO-639-1 is what Whisper takes: 'en-US' → 'en'. */
export function languageCode(language: string | undefined): string | undefined {
  const code = language?.trim().split(/[-_]/)[0].toLowerCase();
  return code ? code : undefined;
}

export async function transcribe(call: OpenaiCall, request: TranscribeRequest): Promise<TranscribeResult> {
  const { kit } = call;
  const model = request.model ?? call.config.transcription_model;
  let audio = request.audio;
  let type = request.contentType;
  let extension = uploadExtension(type);
  if (extension === undefined) {
    // A format OpenAI does not take (AAC, AIFF...): FLAC keeps every sample and is about half the size of WAV.
    audio = await kit.convert(audio, 'flac');
    type = 'audio/flac';
    extension = 'flac';
  }
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(audio)], { type }), `audio.${extension}`);
  form.append('model', model);
  const language = languageCode(request.language);
  if (language) form.append('language', language);
  form.append('response_format', 'json');
  const answer = await postOpenai(kit, call.access, '/audio/transcriptions', form, { maxBytes: TRANSCRIPT_MAX_BYTES, signal: request.signal });
  const { text } = answer.json<{ text?: unknown }>();
  if (typeof text !== 'string') throw kit.error('outage', 'OpenAI answered a transcription without text', { provider: PROVIDER });
  return { text: text.trim(), model };
}

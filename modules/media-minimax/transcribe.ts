/**
 * Transcription with asr-1.0 at `/speech_to_text`: multipart, the language as a `language` header (none: MiniMax
 * detects it). MiniMax reads wav, mp3, flac, ogg/opus, aac, m4a and aiff, not WebM: anything else is converted to mp3
 * first through the kit.
 */
import type { MediaDriverKit, TranscribeRequest, TranscribeResult } from '@talon/media';
import { minimaxApi, PROVIDER, type Envelope } from './wire.ts';

export const DEFAULT_TRANSCRIPTION_MODEL = 'asr-1.0';
const CALL = { timeoutMs: 300_000, maxBytes: 8 * 1024 * 1024 };

/** The file name extension MiniMax reads each accepted type by. */
const EXTENSIONS: Record<string, string> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/flac': 'flac',
  'audio/x-flac': 'flac',
  'audio/ogg': 'ogg',
  'audio/opus': 'opus',
  'audio/aac': 'aac',
  'audio/mp4': 'm4a',
  'audio/x-m4a': 'm4a',
  'audio/aiff': 'aiff',
  'audio/x-aiff': 'aiff',
};

interface TranscriptAnswer extends Envelope {
  text?: string;
}

export async function transcribe(kit: MediaDriverKit, request: TranscribeRequest): Promise<TranscribeResult> {
  const model = request.model ?? DEFAULT_TRANSCRIPTION_MODEL;
  const type = request.contentType.split(';')[0].trim().toLowerCase();
  const known = EXTENSIONS[type];
  const audio = known ? request.audio : await kit.convert(request.audio, 'mp3');
  const ext = known ?? 'mp3';
  const form = new FormData();
  form.set('model', model);
  form.set('response_format', 'json');
  form.set('stream', 'false');
  form.set('file', new Blob([new Uint8Array(audio)], { type: known ? type : 'audio/mpeg' }), `audio.${ext}`);
  const headers: Record<string, string> = request.language ? { language: request.language } : {};
  const answer = await minimaxApi(kit).postForm<TranscriptAnswer>('/speech_to_text', form, headers, { ...CALL, signal: request.signal });
  if (typeof answer.text !== 'string') throw kit.error('outage', `provider '${PROVIDER}' answered with no transcript`, { provider: PROVIDER });
  return { text: answer.text, model };
}

/**
 * Speech (`/t2a_v2`) and music (`/music_generation`), both answered with the audio as hex in the JSON. MiniMax makes
 * mp3, wav and flac (music: mp3 and wav); another format asked for is made as mp3 and converted by the media module.
 */
import type { AudioResult, MediaDriverKit, MusicRequest, SpeechRequest } from '@talon/media';
import { fromHex, minimaxApi, PROVIDER, type Envelope } from './wire.ts';

export const DEFAULT_SPEECH_MODEL = 'speech-2.8-hd';
export const DEFAULT_VOICE = 'English_Graceful_Lady';
/** music-2.6 takes is_instrumental and writes lyrics from the prompt (lyrics_optimizer); 2.5 needs lyrics. */
export const DEFAULT_MUSIC_MODEL = 'music-2.6';
const SPEECH = { timeoutMs: 180_000, maxBytes: 64 * 1024 * 1024 };
const MUSIC = { timeoutMs: 600_000, maxBytes: 128 * 1024 * 1024 };

/** ISO 639-1 codes to the language names MiniMax's `language_boost` takes. */
const LANGUAGES: Record<string, string> = {
  zh: 'Chinese',
  yue: 'Chinese,Yue',
  en: 'English',
  ar: 'Arabic',
  ru: 'Russian',
  es: 'Spanish',
  fr: 'French',
  pt: 'Portuguese',
  de: 'German',
  tr: 'Turkish',
  nl: 'Dutch',
  uk: 'Ukrainian',
  vi: 'Vietnamese',
  id: 'Indonesian',
  ja: 'Japanese',
  it: 'Italian',
  ko: 'Korean',
  th: 'Thai',
  pl: 'Polish',
  ro: 'Romanian',
  el: 'Greek',
  cs: 'Czech',
  fi: 'Finnish',
  hi: 'Hindi',
};

interface AudioAnswer extends Envelope {
  data?: { audio?: string; status?: number };
}

export async function synthesize(kit: MediaDriverKit, request: SpeechRequest): Promise<AudioResult> {
  const model = request.model ?? DEFAULT_SPEECH_MODEL;
  const format = request.format === 'wav' || request.format === 'flac' ? request.format : 'mp3';
  const language = request.language ? (LANGUAGES[request.language.toLowerCase().split(/[-_]/)[0]] ?? 'auto') : undefined;
  const body = {
    model,
    text: request.text,
    stream: false,
    // MiniMax's speed range is 0.5–2; the API's is wider.
    voice_setting: { voice_id: request.voice ?? DEFAULT_VOICE, speed: Math.min(2, Math.max(0.5, request.speed ?? 1)), vol: 1, pitch: 0 },
    audio_setting: { sample_rate: 32000, bitrate: 128000, format, channel: 1 },
    output_format: 'hex',
    ...(language ? { language_boost: language } : {}),
  };
  const answer = await minimaxApi(kit).post<AudioAnswer>('/t2a_v2', body, { ...SPEECH, signal: request.signal });
  return { audio: fromHex(kit, answer.data?.audio, 'speech'), model };
}

export async function generateMusic(kit: MediaDriverKit, request: MusicRequest): Promise<AudioResult> {
  const model = request.model ?? DEFAULT_MUSIC_MODEL;
  if (request.instrumental && !request.prompt)
    throw kit.error('refused', `provider '${PROVIDER}' needs a prompt (the style) for instrumental music`, { provider: PROVIDER });
  const body = {
    model,
    ...(request.prompt ? { prompt: request.prompt } : {}),
    ...(request.lyrics && !request.instrumental ? { lyrics: request.lyrics } : {}),
    ...(request.instrumental ? { is_instrumental: true } : {}),
    // No lyrics for a song with vocals: MiniMax writes them from the prompt.
    ...(!request.instrumental && !request.lyrics ? { lyrics_optimizer: true } : {}),
    audio_setting: { sample_rate: 44100, bitrate: 256000, format: request.format === 'wav' ? 'wav' : 'mp3' },
    output_format: 'hex',
  };
  const answer = await minimaxApi(kit).post<AudioAnswer>('/music_generation', body, { ...MUSIC, signal: request.signal });
  return { audio: fromHex(kit, answer.data?.audio, 'music'), model };
}

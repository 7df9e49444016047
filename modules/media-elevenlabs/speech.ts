/**
 * Speech through `POST {base}/text-to-speech/{voice_id}?output_format=…` (JSON `{text, model_id, …}` in, audio bytes
 * out). The output format string names codec, sample rate and bitrate; raw PCM is wrapped in WAV here.
 */
import type { AudioFormat, AudioResult, MediaDriverKit, SpeechRequest } from '@talon/media';
import { PROVIDER, postElevenlabs } from './access.ts';
import type { ElevenlabsConfig } from './config.ts';
import { languageCode } from './language.ts';
import { pcmToWav } from './wav.ts';

/** ElevenLabs voice ids are 20 letters and digits; anything else would be spliced into the URL path. */
const VOICE_ID = /^[A-Za-z0-9]{20}$/;
/** The range of `voice_settings.speed` ElevenLabs accepts. */
const SPEED_MIN = 0.7;
const SPEED_MAX = 1.2;
const MAX_BYTES = 25 * 1024 * 1024;
/** pcm_44100 is only for paid tiers; 24 kHz is the models' own rate and open to every key. */
const PCM_RATE = 24_000;

/**
 * Our formats as its output_format. Lossless asks (wav, flac) and aac get PCM (one lossy step at most, made by the
 * media module's conversion); opus and ogg get Ogg/Opus.
 */
export const OUTPUT_FORMATS: Record<AudioFormat, string> = {
  mp3: 'mp3_44100_128',
  wav: `pcm_${PCM_RATE}`,
  flac: `pcm_${PCM_RATE}`,
  aac: `pcm_${PCM_RATE}`,
  opus: 'opus_48000_64',
  ogg: 'opus_48000_64',
};

/** The models that take `language_code` (the others answer 400 when it is sent). */
function takesLanguage(model: string): boolean {
  return /_v2_5$|^eleven_v3/.test(model);
}

function speechBody(request: SpeechRequest, model: string): Record<string, unknown> {
  const language = languageCode(request.language);
  return {
    text: request.text,
    model_id: model,
    ...(language && takesLanguage(model) ? { language_code: language } : {}),
    ...(request.speed === undefined ? {} : { voice_settings: { speed: request.speed } }),
  };
}

function checkRequest(kit: MediaDriverKit, voice: string, speed: number | undefined): void {
  if (!VOICE_ID.test(voice))
    throw kit.error('refused', `voice: an ElevenLabs voice id is 20 letters and digits (e.g. 21m00Tcm4TlvDq8ikWAM); got '${voice.slice(0, 40)}'`, {
      provider: PROVIDER,
    });
  if (speed !== undefined && (speed < SPEED_MIN || speed > SPEED_MAX))
    throw kit.error('refused', `speed: ElevenLabs speaks at ${SPEED_MIN} to ${SPEED_MAX} times normal speed; got ${speed}`, { provider: PROVIDER });
}

export async function synthesize(kit: MediaDriverKit, config: ElevenlabsConfig, request: SpeechRequest): Promise<AudioResult> {
  const voice = request.voice ?? config.voice;
  checkRequest(kit, voice, request.speed);
  const model = request.model ?? config.speech_model;
  const outputFormat = OUTPUT_FORMATS[request.format ?? 'mp3'];
  const answer = await postElevenlabs(kit, {
    path: `/text-to-speech/${encodeURIComponent(voice)}?output_format=${encodeURIComponent(outputFormat)}`,
    body: speechBody(request, model),
    accept: 'audio/*',
    maxBytes: MAX_BYTES,
    signal: request.signal,
  });
  if (answer.body.length === 0) throw kit.error('outage', 'ElevenLabs answered speech with no audio', { provider: PROVIDER });
  const audio = outputFormat.startsWith('pcm_') ? pcmToWav(answer.body, PCM_RATE) : answer.body;
  return { audio, model };
}

/**
 * A fake ElevenLabs API on 127.0.0.1, speaking the real wire under `/v1`: `POST /text-to-speech/{voice_id}` with
 * `?output_format=<codec>_<rate>[_<bitrate>]` (JSON `{text, model_id, language_code?, voice_settings?}` → audio
 * bytes: mp3, raw 16-bit PCM at the named rate, Ogg/Opus, µ-law), unknown voices 404 `voice_not_found`, and
 * `POST /speech-to-text` (multipart: file, model_id, language_code? → `{language_code, language_probability, text,
 * words}`). The `xi-api-key` header is checked (401). Errors are ElevenLabs' `{detail: {status, message}}`, or
 * FastAPI's `{detail: [{type, loc, msg}]}` 422 for a missing field.
 */
import type http from 'node:http';
import { MEDIA_FAKE_REFUSAL, type MediaFake } from '../../testing-kit/src/media-conformance.ts';
import { listen, readParams, type FakeFile } from './http.ts';
import { FAKE_RETRY_AFTER, recordOf, sendReply, toneFile, tonePcm, type FailMode, type FakeMediaRequest, type FakeReply as Reply } from './media-fake-kit.ts';

export interface ElevenlabsFakeOptions {
  key?: string;
  transcript?: string;
}

export interface ElevenlabsFake extends MediaFake {
  key: string;
  transcript: string;
  /** Voice ids it knows (a test may add one). */
  voices: Set<string>;
  /** Every request, in order (also those it refused). */
  requests: FakeMediaRequest[];
}

export const ELEVENLABS_FAKE_KEY = 'el-media-test';
/** "Rachel", ElevenLabs' long-standing premade voice, and "George". */
const PREMADE_VOICES = ['21m00Tcm4TlvDq8ikWAM', 'JBFqnCBsd6RMkjVDRZzb'];

const detail = (status: number, code: string, message: string): Reply => ({ status, body: { detail: { status: code, message } } });
const missing = (where: 'body' | 'query', field: string): Reply => ({
  status: 422,
  body: { detail: [{ type: 'missing', loc: [where, field], msg: 'Field required', input: null }] },
});

const FAILURES: Record<FailMode, Reply> = {
  refuse: detail(400, 'content_against_policy', `This request was flagged by our moderation system: ${MEDIA_FAKE_REFUSAL}.`),
  outage: detail(503, 'system_busy', 'The system is experiencing heavy traffic, please try again later.'),
  rate_limit: {
    ...detail(429, 'too_many_concurrent_requests', 'Too many concurrent requests for your subscription.'),
    headers: { 'retry-after': FAKE_RETRY_AFTER },
  },
};

const OUTPUT_FORMAT = /^(mp3_(22050_32|44100_(32|64|96|128|192))|pcm_(8000|16000|22050|24000|44100|48000)|ulaw_8000|alaw_8000|opus_48000_(32|64|96|128|192))$/;

function audioOf(format: string): Reply {
  if (format.startsWith('mp3_')) return { bytes: toneFile('mp3'), type: 'audio/mpeg' };
  if (format.startsWith('opus_')) return { bytes: toneFile('ogg'), type: 'audio/ogg' };
  if (format.startsWith('pcm_')) return { bytes: tonePcm(Number(format.slice(4))), type: 'audio/pcm' };
  // µ-law and A-law silence: one byte per sample at 8 kHz.
  return { bytes: Buffer.alloc(8000, format.startsWith('ulaw') ? 0xff : 0xd5), type: 'audio/basic' };
}

function speech(voice: string, voices: Set<string>, p: Record<string, unknown>): Reply {
  const format = typeof p.output_format === 'string' ? p.output_format : 'mp3_44100_128';
  if (!OUTPUT_FORMAT.test(format))
    return { status: 422, body: { detail: [{ type: 'enum', loc: ['query', 'output_format'], msg: `Input should be a known output format`, input: format }] } };
  if (typeof p.text !== 'string' || !p.text) return missing('body', 'text');
  if (!voices.has(voice)) return detail(404, 'voice_not_found', `A voice with the voice_id ${voice} was not found.`);
  return audioOf(format);
}

function transcription(p: Record<string, unknown>, transcript: string): Reply {
  if (typeof p.model_id !== 'string' || !p.model_id) return missing('body', 'model_id');
  if (!['scribe_v1', 'scribe_v1_experimental'].includes(p.model_id))
    return detail(400, 'invalid_model_id', `Model '${p.model_id}' is not a speech-to-text model.`);
  const file = p.file as FakeFile | undefined;
  if (!file || !Buffer.isBuffer(file.content)) return detail(400, 'invalid_parameters', 'Must provide either file or cloud_storage_url parameter.');
  const words = transcript.split(/\s+/).map((text, i) => ({ text, start: i * 0.4, end: i * 0.4 + 0.3, type: 'word' }));
  const language = typeof p.language_code === 'string' ? p.language_code : 'eng';
  return { status: 200, body: { language_code: language, language_probability: 0.98, text: transcript, words } };
}

export async function startElevenlabsFake(options: ElevenlabsFakeOptions = {}): Promise<ElevenlabsFake> {
  const failures: FailMode[] = [];
  const fake = {
    key: options.key ?? ELEVENLABS_FAKE_KEY,
    transcript: options.transcript ?? 'Hello from the fake transcriber.',
    voices: new Set(PREMADE_VOICES),
    requests: [] as FakeMediaRequest[],
  };

  function route(req: http.IncomingMessage, url: URL, p: Record<string, unknown>): Reply {
    const failure = failures.shift();
    if (failure) return FAILURES[failure];
    const key = req.headers['xi-api-key'];
    if (key === undefined) return detail(401, 'needs_authorization', 'Neither authorization header nor xi-api-key received, please provide one.');
    if (key !== fake.key) return detail(401, 'invalid_api_key', 'Invalid API key');
    const tts = /^\/v1\/text-to-speech\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'POST' && tts) return speech(decodeURIComponent(tts[1]), fake.voices, p);
    if (req.method === 'POST' && url.pathname === '/v1/speech-to-text') return transcription(p, fake.transcript);
    return { status: 404, body: { detail: 'Not Found' } };
  }

  const server = await listen(async (req, res, url) => {
    const params = await readParams(req, url);
    fake.requests.push(recordOf(req, url, params));
    sendReply(res, route(req, url, params));
  });

  return Object.assign(fake, {
    url: `http://127.0.0.1:${server.port}`,
    failNext: (mode: FailMode) => void failures.push(mode),
    stop: () => server.close(),
  });
}

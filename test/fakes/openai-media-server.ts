/**
 * A fake OpenAI media API (and so of every OpenAI-compatible server) on 127.0.0.1, speaking the real wire under
 * `/v1`: `POST /images/generations` (JSON; gpt-image models answer b64_json and refuse `response_format` with 400
 * "Unknown parameter", dall-e models answer a URL unless asked for b64_json, dall-e-3 takes n = 1 only and
 * revises the prompt, each model's sizes checked), `POST /audio/speech` (JSON → audio bytes in the asked
 * response_format: mp3, opus (Ogg), aac, flac, wav, pcm; voice, speed and input length checked),
 * `POST /audio/transcriptions` (multipart: file with a supported extension, model, ISO-639-1 language → {text}),
 * and `GET /files/<name>.png` for the image URLs it hands out. Errors are OpenAI's envelope
 * `{error: {message, type, param, code}}`; `Authorization: Bearer <key>` is checked (401) unless the fake is keyless.
 */
import type http from 'node:http';
import { MEDIA_FAKE_REFUSAL, type MediaFake } from '../../testing-kit/src/media-conformance.ts';
import { listen, nowSeconds, readParams, type FakeFile } from './http.ts';
import {
  FAKE_RETRY_AFTER,
  recordOf,
  sendBytes,
  sendReply,
  toneFile,
  tonePcm,
  type FailMode,
  type FakeMediaRequest,
  type FakeReply as Reply,
} from './media-fake-kit.ts';
import { samplePng, sampleWav } from './media-samples.ts';

export interface OpenaiMediaFakeOptions {
  /** The key requests must carry as a bearer token; null: a keyless server (any or no Authorization). */
  key?: string | null;
  /** What transcriptions answer. */
  transcript?: string;
}

export interface OpenaiMediaFake extends MediaFake {
  /** The key it checks now (settable: null makes it a keyless self-hosted server). */
  key: string | null;
  transcript: string;
  /** Every request, in order (also those it refused). */
  requests: FakeMediaRequest[];
}

export const OPENAI_FAKE_KEY = 'sk-media-test';

const fail = (status: number, message: string, param: string | null, code: string | null, type = 'invalid_request_error'): Reply => ({
  status,
  body: { error: { message, type, param, code } },
});

const FAILURES: Record<FailMode, Reply> = {
  refuse: fail(400, `Your request was rejected as a result of our safety system: ${MEDIA_FAKE_REFUSAL}.`, null, 'content_policy_violation'),
  outage: fail(503, 'The server is overloaded or not ready yet.', null, null, 'server_error'),
  rate_limit: {
    ...fail(429, 'Rate limit reached for requests per min. Please try again in 7s.', null, 'rate_limit_exceeded', 'requests'),
    headers: { 'retry-after': FAKE_RETRY_AFTER },
  },
};

const SIZES: Array<[RegExp, string[]]> = [
  [/^gpt-image/, ['1024x1024', '1536x1024', '1024x1536', 'auto']],
  [/^dall-e-3$/, ['1024x1024', '1792x1024', '1024x1792']],
  [/^dall-e-2$/, ['256x256', '512x512', '1024x1024']],
];
const VOICES = new Set(['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse']);
const UPLOAD_EXTENSIONS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];

function images(p: Record<string, unknown>, origin: string): Reply {
  if (typeof p.prompt !== 'string' || !p.prompt) return fail(400, "Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter');
  const model = typeof p.model === 'string' ? p.model : 'dall-e-2';
  const gptImage = model.startsWith('gpt-image');
  if (gptImage && p.response_format !== undefined) return fail(400, "Unknown parameter: 'response_format'.", 'response_format', 'unknown_parameter');
  const n = p.n === undefined ? 1 : Number(p.n);
  const maxN = model === 'dall-e-3' ? 1 : 10;
  if (!Number.isInteger(n) || n < 1 || n > maxN)
    return fail(400, `Invalid 'n': expected an integer from 1 to ${maxN}, got ${String(p.n)}.`, 'n', 'invalid_value');
  const sizes = SIZES.find(([pattern]) => pattern.test(model))?.[1];
  const size = p.size === undefined ? undefined : String(p.size);
  if (size !== undefined && (sizes ? !sizes.includes(size) : !/^\d+x\d+$/.test(size)))
    return fail(400, `Invalid value: '${size}'. Supported values are: ${(sizes ?? ['WxH']).map((s) => `'${s}'`).join(', ')}.`, 'size', 'invalid_value');
  const b64 = gptImage || p.response_format === 'b64_json';
  const data = Array.from({ length: n }, (_, i) => ({
    ...(b64 ? { b64_json: samplePng(8, 8, i).toString('base64') } : { url: `${origin}/files/img-${i}.png` }),
    ...(model === 'dall-e-3' ? { revised_prompt: `A detailed picture of ${p.prompt as string}` } : {}),
  }));
  return { status: 200, body: { created: nowSeconds(), data } };
}

function speechBytes(format: string): Reply {
  const files: Record<string, [string, () => Buffer]> = {
    mp3: ['audio/mpeg', () => toneFile('mp3')],
    opus: ['audio/ogg', () => toneFile('ogg')],
    aac: ['audio/aac', () => toneFile('aac')],
    flac: ['audio/flac', () => toneFile('flac')],
    wav: ['audio/wav', () => sampleWav(1, 24000)],
    pcm: ['audio/pcm', () => tonePcm(24000)],
  };
  const [type, bytes] = files[format];
  return { bytes: bytes(), type };
}

function speech(p: Record<string, unknown>): Reply {
  for (const field of ['model', 'input', 'voice'])
    if (typeof p[field] !== 'string' || !p[field]) return fail(400, `Missing required parameter: '${field}'.`, field, 'missing_required_parameter');
  if ((p.input as string).length > 4096)
    return fail(400, "Invalid 'input': string too long. Expected a string with maximum length 4096.", 'input', 'string_above_max_length');
  if (!VOICES.has(p.voice as string)) return fail(400, `Invalid value for 'voice': '${String(p.voice)}'.`, 'voice', 'invalid_value');
  const format = p.response_format === undefined ? 'mp3' : String(p.response_format);
  if (!['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'].includes(format))
    return fail(400, `Invalid value: '${format}'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.`, 'response_format', 'invalid_value');
  const speed = p.speed === undefined ? 1 : Number(p.speed);
  if (!(speed >= 0.25 && speed <= 4)) return fail(400, `Invalid 'speed': expected 0.25 to 4.0, got ${String(p.speed)}.`, 'speed', 'invalid_value');
  return speechBytes(format);
}

function transcription(p: Record<string, unknown>, transcript: string): Reply {
  const file = p.file as FakeFile | undefined;
  if (!file || typeof file !== 'object' || !Buffer.isBuffer(file.content))
    return fail(400, "Missing required parameter: 'file'.", 'file', 'missing_required_parameter');
  if (typeof p.model !== 'string' || !p.model) return fail(400, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  const extension = file.name.split('.').pop()?.toLowerCase() ?? '';
  if (!UPLOAD_EXTENSIONS.includes(extension)) return fail(400, `Invalid file format. Supported formats: ${JSON.stringify(UPLOAD_EXTENSIONS)}`, null, null);
  if (p.language !== undefined && !/^[a-z]{2}$/.test(String(p.language)))
    return fail(400, `Invalid language '${String(p.language)}'. Language parameter must be specified in ISO-639-1 format.`, 'language', 'invalid_value');
  return { status: 200, body: { text: transcript } };
}

export async function startOpenaiMediaFake(options: OpenaiMediaFakeOptions = {}): Promise<OpenaiMediaFake> {
  const failures: FailMode[] = [];
  const fake = {
    key: options.key === undefined ? OPENAI_FAKE_KEY : options.key,
    transcript: options.transcript ?? 'Hello from the fake transcriber.',
    requests: [] as FakeMediaRequest[],
  };

  function route(req: http.IncomingMessage, url: URL, p: Record<string, unknown>): Reply {
    const failure = failures.shift();
    if (failure) return FAILURES[failure];
    if (fake.key !== null && req.headers.authorization !== `Bearer ${fake.key}`)
      return req.headers.authorization
        ? fail(401, 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.', null, 'invalid_api_key')
        : fail(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.", null, null);
    const at = `${req.method} ${url.pathname}`;
    if (at === 'POST /v1/images/generations') return images(p, url.origin);
    if (at === 'POST /v1/audio/speech') return speech(p);
    if (at === 'POST /v1/audio/transcriptions') return transcription(p, fake.transcript);
    return fail(404, `Invalid URL (${at})`, null, null);
  }

  const server = await listen(async (req, res, url) => {
    const origin = `http://127.0.0.1:${server.port}`;
    if (req.method === 'GET' && /^\/files\/img-\d+\.png$/.test(url.pathname)) {
      // The image URLs it hands out are public (OpenAI's are pre-signed blob URLs): no key asked.
      fake.requests.push(recordOf(req, url, {}));
      return sendBytes(res, 'image/png', samplePng(8, 8, Number(/\d+/.exec(url.pathname)![0])));
    }
    const params = await readParams(req, url);
    fake.requests.push(recordOf(req, url, params));
    sendReply(res, route(req, new URL(url.pathname + url.search, origin), params));
  });

  return Object.assign(fake, {
    url: `http://127.0.0.1:${server.port}`,
    failNext: (mode: FailMode) => void failures.push(mode),
    stop: () => server.close(),
  });
}

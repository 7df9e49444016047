/**
 * A fake of the Gemini API's media endpoints, speaking its wire: `x-goog-api-key` (403 PERMISSION_DENIED without one,
 * 400 API_KEY_INVALID for another), Google's error envelope `{error: {code, message, status, details}}`, Gemini image
 * models on `:generateContent` (an inlineData PNG, IMAGE_SAFETY for a filtered prompt), Imagen on `:predict`
 * (`predictions[].bytesBase64Encoded`, `raiFilteredReason` with includeRaiReason), and Veo as a long-running operation
 * (`:predictLongRunning` → `{name}`, read at `/v1beta/{name}` until done, its sample a file URI on this origin that is
 * served only with the key). Real bytes: samplePng and the sample MP4.
 *
 * Prompts steer it: one containing "forbidden" is filtered (no image; a Veo operation done with
 * raiMediaFilteredReasons), one containing "explode" makes a Veo operation end with an `error`.
 * Simplified: failNext applies to the next POST (a generation call, not a poll); its 429 carries `Retry-After: 7`
 * beside the RetryInfo detail Google sends; no quotas, no Files API beyond the download, operations never expire.
 */
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { MEDIA_FAKE_REFUSAL, type MediaFake } from '../../testing-kit/src/media-conformance.ts';
import { listen, sendJson } from './http.ts';
import { FAKE_RETRY_AFTER, sendBytes, type FailMode } from './media-fake-kit.ts';
import { sampleMp4, samplePng } from './media-samples.ts';

export interface GoogleRecordedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface GoogleMediaFakeOptions {
  /** The key it accepts (default 'test-key'). */
  key?: string;
  /** How many reads of an operation answer "not done" before it is done (default 1). */
  videoPolls?: number;
}

export interface GoogleMediaFake extends MediaFake {
  /** The API root (no version): what `[provider_urls] gemini` is set to. */
  url: string;
  key: string;
  requests: GoogleRecordedRequest[];
  /** Where Veo's result URIs point (default: this fake's origin); another origin tests that the key stays home. */
  setVideoUriBase(base: string): void;
  /** Reads of an operation that answer "not done" before it is done. */
  videoPolls: number;
}

const IMAGEN_RATIOS = new Set(['1:1', '3:4', '4:3', '9:16', '16:9']);
const GEMINI_RATIOS = new Set(['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9']);

function googleError(res: http.ServerResponse, code: number, status: string, message: string, extra: Record<string, unknown> = {}, headers = {}): void {
  sendJson(res, code, { error: { code, message, status, ...extra } }, headers);
}

const FAILURES: Record<FailMode, (res: http.ServerResponse) => void> = {
  refuse: (res) => googleError(res, 400, 'INVALID_ARGUMENT', `The prompt was ${MEDIA_FAKE_REFUSAL}.`),
  outage: (res) => googleError(res, 503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'),
  rate_limit: (res) =>
    googleError(
      res,
      429,
      'RESOURCE_EXHAUSTED',
      'You exceeded your current quota, please check your plan and billing details.',
      { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }] },
      { 'retry-after': FAKE_RETRY_AFTER },
    ),
};

/** A small PNG of the asked aspect ratio (16 px on the short side). */
function pngFor(ratio: string | undefined, seed: number): Buffer {
  const [w, h] = (ratio ?? '1:1').split(':').map(Number);
  const scale = 16 / Math.min(w, h);
  return samplePng(Math.round(w * scale), Math.round(h * scale), seed);
}

interface Operation {
  model: string;
  prompt: string;
  reads: number;
}

export async function startGoogleMediaFake(options: GoogleMediaFakeOptions = {}): Promise<GoogleMediaFake> {
  const key = options.key ?? 'test-key';
  const requests: GoogleRecordedRequest[] = [];
  const operations = new Map<string, Operation>();
  const files = new Set<string>();
  let failNext: FailMode | undefined;
  let videoUriBase = '';
  let seed = 0;

  const server = await listen(async (req, res, url) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> = {};
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    }
    requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body });

    // Google takes the key as a header or ?key=; the driver must use the header (tests check).
    const given = (req.headers['x-goog-api-key'] as string | undefined) ?? url.searchParams.get('key') ?? undefined;
    if (!given)
      return googleError(
        res,
        403,
        'PERMISSION_DENIED',
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    if (given !== key)
      return googleError(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', {
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
      });
    if (req.method === 'POST' && failNext) {
      const mode = failNext;
      failNext = undefined;
      return FAILURES[mode](res);
    }

    const path = url.pathname;
    let m: RegExpExecArray | null;
    if (req.method === 'POST' && (m = /^\/v1beta\/models\/([^/:]+):(predict|generateContent|predictLongRunning)$/.exec(path))) {
      const model = decodeURIComponent(m[1]);
      if (m[2] === 'predict') return predict(res, model, body);
      if (m[2] === 'generateContent') return generateContent(res, model, body);
      return predictLongRunning(res, model, body);
    }
    if (req.method === 'GET' && (m = /^\/v1beta\/(models\/([^/]+)\/operations\/([^/]+))$/.exec(path))) return readOperation(res, m[1], m[3]);
    if (req.method === 'GET' && (m = /^\/v1beta\/files\/([^/:]+):download$/.exec(path)) && files.has(m[1])) return sendBytes(res, 'video/mp4', sampleMp4());
    googleError(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
  });

  function predict(res: http.ServerResponse, model: string, body: Record<string, unknown>): void {
    if (!model.startsWith('imagen-'))
      return googleError(res, 400, 'INVALID_ARGUMENT', `models/${model} is not found for API version v1beta, or is not supported for predict.`);
    const instances = body.instances as Array<{ prompt?: unknown }> | undefined;
    const parameters = (body.parameters ?? {}) as { sampleCount?: number; aspectRatio?: string; includeRaiReason?: boolean };
    const prompt = instances?.[0]?.prompt;
    if (typeof prompt !== 'string' || !prompt) return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid value at instances[0].prompt');
    const count = parameters.sampleCount ?? 4;
    if (!Number.isInteger(count) || count < 1 || count > 4) return googleError(res, 400, 'INVALID_ARGUMENT', 'sampleCount must be between 1 and 4.');
    if (parameters.aspectRatio !== undefined && !IMAGEN_RATIOS.has(parameters.aspectRatio))
      return googleError(res, 400, 'INVALID_ARGUMENT', `Unsupported aspect ratio: ${parameters.aspectRatio}`);
    if (prompt.includes('forbidden')) {
      const reason = 'The prompt could not be submitted. Your current safety filter threshold prohibited one or more words in this prompt.';
      return sendJson(res, 200, parameters.includeRaiReason ? { predictions: [{ raiFilteredReason: reason }] } : {});
    }
    const predictions = Array.from({ length: count }, () => ({
      mimeType: 'image/png',
      bytesBase64Encoded: pngFor(parameters.aspectRatio, seed++).toString('base64'),
    }));
    sendJson(res, 200, { predictions });
  }

  function generateContent(res: http.ServerResponse, model: string, body: Record<string, unknown>): void {
    const config = (body.generationConfig ?? {}) as { responseModalities?: string[]; imageConfig?: { aspectRatio?: string } };
    const contents = body.contents as Array<{ parts?: Array<{ text?: unknown }> }> | undefined;
    const prompt = contents?.flatMap((c) => c.parts ?? []).find((p) => typeof p.text === 'string')?.text as string | undefined;
    if (!prompt) return googleError(res, 400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified');
    if (!config.responseModalities?.map((x) => x.toUpperCase()).includes('IMAGE') || !model.includes('image'))
      return googleError(res, 400, 'INVALID_ARGUMENT', `Model ${model} does not support the requested response modalities: image`);
    const ratio = config.imageConfig?.aspectRatio;
    if (ratio !== undefined && !GEMINI_RATIOS.has(ratio)) return googleError(res, 400, 'INVALID_ARGUMENT', `Unsupported aspect ratio: ${ratio}`);
    if (prompt.includes('forbidden'))
      return sendJson(res, 200, {
        candidates: [
          {
            content: { role: 'model' },
            finishReason: 'IMAGE_SAFETY',
            finishMessage: 'Unable to show the generated image: it may violate the policy.',
            index: 0,
          },
        ],
        modelVersion: model,
      });
    const image = { inlineData: { mimeType: 'image/png', data: pngFor(ratio, seed++).toString('base64') } };
    sendJson(res, 200, { candidates: [{ content: { role: 'model', parts: [image] }, finishReason: 'STOP', index: 0 }], modelVersion: model });
  }

  function predictLongRunning(res: http.ServerResponse, model: string, body: Record<string, unknown>): void {
    if (!model.startsWith('veo-')) return googleError(res, 400, 'INVALID_ARGUMENT', `models/${model} is not supported for predictLongRunning.`);
    const prompt = (body.instances as Array<{ prompt?: unknown }> | undefined)?.[0]?.prompt;
    if (typeof prompt !== 'string' || !prompt) return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid value at instances[0].prompt');
    const duration = (body.parameters as { durationSeconds?: number } | undefined)?.durationSeconds;
    const allowed = model.startsWith('veo-2') ? [5, 6, 7, 8] : [4, 6, 8];
    if (duration !== undefined && !allowed.includes(duration))
      return googleError(
        res,
        400,
        'INVALID_ARGUMENT',
        `The number value for durationSeconds is out of bound. Please provide a value in ${allowed.join(', ')}.`,
      );
    const id = randomBytes(6).toString('hex');
    operations.set(id, { model, prompt, reads: 0 });
    sendJson(res, 200, { name: `models/${model}/operations/${id}` });
  }

  function readOperation(res: http.ServerResponse, name: string, id: string): void {
    const op = operations.get(id);
    if (!op || !name.startsWith(`models/${op.model}/`)) return googleError(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
    op.reads++;
    if (op.reads <= fake.videoPolls) return sendJson(res, 200, { name });
    if (op.prompt.includes('explode'))
      return sendJson(res, 200, { name, done: true, error: { code: 13, message: 'Video generation failed due to an internal error.' } });
    const type = 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse';
    if (op.prompt.includes('forbidden'))
      return sendJson(res, 200, {
        name,
        done: true,
        response: { '@type': type, generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['The video violates the usage guidelines.'] } },
      });
    files.add(id);
    const uri = `${videoUriBase || origin}/v1beta/files/${id}:download?alt=media`;
    sendJson(res, 200, { name, done: true, response: { '@type': type, generateVideoResponse: { generatedSamples: [{ video: { uri } }] } } });
  }

  const origin = `http://127.0.0.1:${server.port}`;
  const fake: GoogleMediaFake = {
    url: origin,
    key,
    requests,
    videoPolls: options.videoPolls ?? 1,
    failNext: (mode) => void (failNext = mode),
    setVideoUriBase: (base) => void (videoUriBase = base.replace(/\/+$/, '')),
    stop: () => server.close(),
  };
  return fake;
}

/**
 * POST /api/media/transcribe: the audio as a raw `audio/*` body (provider, language and model in the query) or as
 * multipart/form-data with the field `file` (the same three as fields or in the query). Over [media]
 * max_transcribe_bytes (read on each request) is 413; a body that is not audio is 415. The parsers are the media module's own (each module's routes are a Fastify scope of their own).
 */
import { Transform, type Readable } from 'node:stream';
import { HttpError, badRequest, payloadTooLarge, type FastifyRequest, type Routes } from '@talon/module-sdk';
import type { MediaService } from '@talon/media';
import { mediaConfigSchema } from '../config.ts';
import { transcribeQuery, transcriptionResponse } from '../services/schemas.ts';
import { clientGone } from './media.ts';

const tags = ['media'];
/** Room for the multipart framing and fields around the file. */
const MULTIPART_SLACK = 64 * 1024;
/** The route's own limit: the largest cap the configuration allows. The configured one is checked on each request. */
const HARD_LIMIT = mediaConfigSchema.properties.max_transcribe_bytes.maximum + MULTIPART_SLACK;

const tooLarge = (max: number, size?: number) =>
  payloadTooLarge(`file: the body is ${size === undefined ? 'larger' : `${size} bytes,`} over the cap of ${max} bytes ([media] max_transcribe_bytes)`);

/**
 * [media] max_transcribe_bytes as it is now (a config change counts at once): a body that declares more is refused
 * before it is read, one that turns out longer (chunked) when it passes the cap; nothing past it is kept in memory.
 */
function capBody(maxBytes: () => number) {
  return async (request: FastifyRequest, _reply: unknown, payload: Readable): Promise<Readable> => {
    const max = maxBytes();
    const limit = max + MULTIPART_SLACK;
    const declared = Number(request.headers['content-length']);
    if (declared > limit) throw tooLarge(max, declared);
    let seen = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, next) {
        seen += chunk.length;
        next(seen > limit ? tooLarge(max) : null, chunk);
      },
    });
    return payload.pipe(counted);
  };
}

type Fields = { provider?: string; language?: string; model?: string };

export function transcribeRoutes(app: Routes, service: () => MediaService, maxBytes: () => number): void {
  const raw = (_request: unknown, body: Buffer, done: (err: null, body: Buffer) => void) => done(null, body);
  app.addContentTypeParser(/^(audio\/|video\/webm|application\/octet-stream|multipart\/form-data)/, { parseAs: 'buffer' }, raw);
  app.post(
    '/api/media/transcribe',
    {
      schema: {
        summary: 'Transcribe audio: a raw audio/* body, or multipart/form-data with the field `file`',
        tags,
        querystring: transcribeQuery,
        response: { 200: transcriptionResponse },
      },
      bodyLimit: HARD_LIMIT,
      preParsing: capBody(maxBytes),
      config: { rateCost: 30 },
    },
    async (request, reply) => {
      const { audio, fields } = await readAudio(request);
      return service().transcribe({ audio, ...request.query, ...fields }, { signal: clientGone(reply) });
    },
  );
}

/** The audio and, for a multipart body, its fields (checked against the query's schema). */
async function readAudio(request: FastifyRequest): Promise<{ audio: Buffer; fields: Fields }> {
  const type = String(request.headers['content-type'] ?? '');
  if (!Buffer.isBuffer(request.body)) {
    throw new HttpError(415, "file: send the audio as the body with an audio/* Content-Type, or as multipart/form-data with the field 'file'");
  }
  if (!type.startsWith('multipart/form-data')) {
    if (request.body.length === 0) throw badRequest('file: the body is empty; send the audio');
    return { audio: request.body, fields: {} };
  }
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(request.body), { headers: { 'content-type': type } }).formData();
  } catch (err) {
    throw badRequest(`invalid multipart body: ${(err as Error).message}`);
  }
  const file = form.get('file');
  if (!(file instanceof Blob)) throw badRequest("file: the multipart body has no file in the field 'file'");
  const fields: Record<string, string> = {};
  for (const name of ['provider', 'language', 'model'] as const) {
    const value = form.get(name);
    if (typeof value === 'string' && value !== '') fields[name] = value;
  }
  checkFields(request, fields);
  return { audio: Buffer.from(await file.arrayBuffer()), fields };
}

/** The form's fields pass the same schema as the query, and fail naming the field as the query would. */
function checkFields(request: FastifyRequest, fields: Record<string, string>): void {
  const validate = request.compileValidationSchema(transcribeQuery);
  if (validate(fields)) return;
  const failed = validate.errors?.[0]?.instancePath?.replace(/^\//, '') ?? '';
  const props: Record<string, { 'x-error'?: string }> = transcribeQuery.properties;
  const explained = props[failed]?.['x-error'];
  throw badRequest(`invalid value for '${failed || 'form'}': ${explained ?? validate.errors?.[0]?.message ?? 'not allowed'}`);
}

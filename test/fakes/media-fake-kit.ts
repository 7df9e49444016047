/**
 * What the media provider fakes share: the record of a request, the way a test makes the next one fail, and real
 * audio files in the formats providers answer with (1 s 440 Hz tones made once with ffmpeg, in
 * test/fixtures/media/tone-1s.*), so that what the media module measures and converts is real.
 */
import type http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sendJson } from './http.ts';
import { sampleWav } from './media-samples.ts';

/** One request a driver made to a fake, in order. Multipart files are FakeFile values in `params`. */
export interface FakeMediaRequest {
  method: string;
  /** The path without the query. */
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  /** The JSON or multipart body's fields (the query string's too). */
  params: Record<string, unknown>;
}

export type FailMode = 'refuse' | 'outage' | 'rate_limit';

/** The Retry-After (seconds) of a fake's 429. */
export const FAKE_RETRY_AFTER = '7';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'media');
const tones = new Map<string, Buffer>();

/**
 * A 1 s tone as a provider's file: mp3 (MPEG-1 layer III, 24 kHz mono), ogg (Ogg/Opus, 48 kHz), flac (16 kHz), aac
 * (ADTS AAC-LC, 24 kHz).
 */
export function toneFile(format: 'mp3' | 'ogg' | 'flac' | 'aac'): Buffer {
  let bytes = tones.get(format);
  if (!bytes) tones.set(format, (bytes = readFileSync(path.join(fixtures, `tone-1s.${format}`))));
  return bytes;
}

/** 1 s of raw 16-bit little-endian mono PCM at `sampleRate` (a WAV's samples without its header). */
export function tonePcm(sampleRate: number): Buffer {
  return sampleWav(1, sampleRate).subarray(44);
}

/** The request's record: method, path, query and headers (the body is read by the fake's readParams). */
export function recordOf(req: http.IncomingMessage, url: URL, params: Record<string, unknown>): FakeMediaRequest {
  return { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, params };
}

export function sendBytes(res: http.ServerResponse, type: string, bytes: Buffer): void {
  res.writeHead(200, { 'content-type': type, 'content-length': bytes.length });
  res.end(bytes);
}

/** What a fake's route answers: a JSON body with its status (and headers), or audio or image bytes. */
export type FakeReply = { status: number; body: unknown; headers?: Record<string, string> } | { bytes: Buffer; type: string };

export function sendReply(res: http.ServerResponse, reply: FakeReply): void {
  if ('bytes' in reply) sendBytes(res, reply.type, reply.bytes);
  else sendJson(res, reply.status, reply.body, reply.headers);
}

/**
 * How a stored file goes out (GET /api/uploads/{file_id}): streamed from disk, never read whole; one byte range
 * (206, 416 when unsatisfiable; a malformed Range is ignored and the whole file sent, as servers do; several ranges
 * get the whole file with 200, which RFC 9110 allows and spares a multipart body no player asks for); the sha256 as
 * a strong ETag (If-None-Match → 304, If-Range honoured); `nosniff`; inline only for the image, audio and video
 * types of the store, active content (HTML, SVG, XML, scripts) only ever as an octet-stream attachment.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import parseRange from 'range-parser';
import type { FastifyReply, FastifyRequest } from '@talon/module-sdk';
import type { UploadRow } from '../services/uploads.ts';
import { isActive, isInline } from '../services/file-types.ts';

/** A file id names its bytes forever, so a browser may keep it; private: it was served behind the API's auth. */
const CACHE_CONTROL = 'private, max-age=86400, immutable';

/** Sends the row's file (its bytes at `file`), or returns false when they are gone from disk. */
export async function serveUpload(row: UploadRow, file: string, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) return false;
  const size = info.size;
  const etag = row.sha256 ? `"${row.sha256}"` : `W/"${size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
  const active = isActive(row.content_type);
  reply
    .header('etag', etag)
    .header('cache-control', CACHE_CONTROL)
    .header('accept-ranges', 'bytes')
    .header('x-content-type-options', 'nosniff')
    .header('content-disposition', contentDisposition(isInline(row.content_type) ? 'inline' : 'attachment', row.filename))
    .type(active ? 'application/octet-stream' : row.content_type);
  if (etagMatches(request.headers['if-none-match'], etag)) {
    reply.code(304).send();
    return true;
  }
  const range = wantedRange(request, size, etag);
  if (range === 'unsatisfiable') {
    reply
      .code(416)
      .header('content-range', `bytes */${size}`)
      .type('application/json')
      .send({ error: `Range: no byte of it is within the file's ${size} bytes` });
    return true;
  }
  if (range) {
    reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
      .header('content-length', range.end - range.start + 1);
    reply.send(createReadStream(file, { start: range.start, end: range.end }));
    return true;
  }
  reply.header('content-length', size);
  reply.send(size === 0 ? '' : createReadStream(file));
  return true;
}

/** The one range to send, 'unsatisfiable', or undefined for the whole file (none asked, malformed, several, stale If-Range). */
function wantedRange(request: FastifyRequest, size: number, etag: string): { start: number; end: number } | 'unsatisfiable' | undefined {
  const header = request.headers.range;
  if (!header || request.method !== 'GET') return undefined;
  const ifRange = request.headers['if-range'];
  // If-Range with a date or another tag: the client's copy is stale, so it gets the whole file.
  if (ifRange !== undefined && (ifRange !== etag || etag.startsWith('W/'))) return undefined;
  if (!wellFormed(header)) return undefined;
  const ranges = parseRange(size, header, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return ranges[0];
}

/** One byte-range-spec: first-last (first ≤ last), first-, or -suffix. */
const RANGE_SPEC = /^\s*(?:(\d+)-(\d*)|-\d+)\s*$/;

/**
 * RFC 9110 14.1.1: a Range that is not valid syntax (last before first included) is ignored, not answered 416 as
 * range-parser would; only a valid one that no byte of the file satisfies is a 416.
 */
function wellFormed(header: string): boolean {
  const m = /^bytes=(.*)$/i.exec(header.trim());
  if (!m) return false;
  return m[1].split(',').every((spec) => {
    const parts = RANGE_SPEC.exec(spec);
    return parts !== null && (parts[1] === undefined || parts[2] === '' || Number(parts[1]) <= Number(parts[2]));
  });
}

/** If-None-Match: `*` or a list of tags, compared weakly (RFC 9110 13.1.2). */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/**
 * RFC 6266: an ASCII `filename` for old clients (anything else replaced by '_') and the exact name as `filename*`
 * (RFC 8187 percent-encoding).
 */
export function contentDisposition(kind: 'inline' | 'attachment', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

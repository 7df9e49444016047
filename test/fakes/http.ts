/**
 * What the platform fakes share: a loopback HTTP server, the request's parameters the way the platforms accept them
 * (query string, JSON, form-urlencoded or multipart), and a recorder of every call a client made.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Busboy } from '@fastify/busboy';

/** One call a client made to a fake, in order: the method or route, and its parameters (files as FakeFile). */
export interface RecordedCall {
  method: string;
  params: Record<string, unknown>;
  at: number;
}

/** An uploaded file as a multipart part carried it. */
export interface FakeFile {
  name: string;
  type: string;
  content: Buffer;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void | Promise<void>;

export async function listen(handler: Handler): Promise<{ server: http.Server; port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    Promise.resolve(handler(req, res, url)).catch((err: unknown) => {
      // A fake's own bug is a 500 the test sees, never a hang.
      if (!res.headersSent) sendJson(res, 500, { error: String(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** The query string and body parameters of a request; multipart parts with a filename become FakeFile values. */
export async function readParams(req: http.IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  if (!body.length) return params;
  const type = String(req.headers['content-type'] ?? '');
  if (type.startsWith('application/json')) return { ...params, ...(JSON.parse(body.toString('utf8')) as Record<string, unknown>) };
  if (type.startsWith('application/x-www-form-urlencoded')) return { ...params, ...Object.fromEntries(new URLSearchParams(body.toString('utf8'))) };
  if (type.startsWith('multipart/form-data')) return { ...params, ...(await readMultipart(type, body)) };
  return params;
}

/**
 * Multipart parts as the platforms read them, with busboy (fastify's parser): lenient the way their servers are, so
 * grammY's compact part headers (`content-disposition:form-data;name="x"`, an unquoted filename), which undici's
 * Request.formData() refuses, are read as Telegram reads them.
 */
function readMultipart(type: string, body: Buffer): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = {};
  const files: Array<Promise<void>> = [];
  return new Promise((resolve, reject) => {
    const parser = Busboy({ headers: { 'content-type': type } });
    parser.on('field', (name, value) => (params[name] = value));
    parser.on('file', (name, stream, filename, _encoding, mimeType) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      files.push(new Promise((done) => stream.on('end', () => done(void (params[name] = { name: filename, type: mimeType, content: Buffer.concat(chunks) })))));
    });
    parser.on('finish', () => void Promise.all(files).then(() => resolve(params), reject));
    parser.on('error', reject);
    parser.end(body);
  });
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Test helpers: local fake HTTP servers (127.0.0.1 only) and the catalog service of a test kernel. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestKernel } from '@talon/testing';
import { catalogService, type CatalogService } from '@talon/catalog';

export interface SeenRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface FakeServer {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export type FakeHandler = (req: SeenRequest) => { status?: number; json?: unknown; text?: string; delayMs?: number };

export async function fakeServer(handler: FakeHandler): Promise<FakeServer> {
  const requests: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const seen = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body };
      requests.push(seen);
      const out = handler(seen);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(out.status ?? 200, { 'content-type': out.json !== undefined ? 'application/json' : 'text/plain' });
        res.end(out.json !== undefined ? JSON.stringify(out.json) : (out.text ?? ''));
      };
      if (out.delayMs) setTimeout(send, out.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback address nothing listens on (a server is bound, its port noted, then closed). */
export async function deadUrl(): Promise<string> {
  const s = await fakeServer(() => ({}));
  await s.close();
  return s.url;
}

export function service(k: TestKernel): CatalogService {
  return k.kernel.services.view<CatalogService>(catalogService.id);
}

export async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

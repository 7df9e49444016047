/** Test helpers: local fake HTTP servers (127.0.0.1 only) and the catalog service of a test kernel. */
import assert from 'node:assert/strict';
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

export interface FakeGithub {
  server: FakeServer;
  /** What the token endpoint answers next, per device code (unknown codes: bad_verification_code). */
  tokenReplies: Map<string, Record<string, unknown>>;
  /** How many device codes were handed out (the last user code is `ABCD-000<codes>`). */
  codes(): number;
  /** The `[catalog.copilot_oauth]` section pointing the device flow at it. */
  config: string;
}

/** GitHub's device-flow endpoints as the Copilot login calls them: a device code per start, scripted token answers. */
export async function fakeGithub(): Promise<FakeGithub> {
  const tokenReplies = new Map<string, Record<string, unknown>>();
  let codes = 0;
  const server = await fakeServer((req) => {
    const form = new URLSearchParams(req.body);
    if (req.path === '/login/device/code') {
      assert.equal(form.get('client_id'), 'test-client');
      codes++;
      return {
        json: { device_code: `dev-${codes}`, user_code: `ABCD-000${codes}`, verification_uri: 'https://github.com/login/device', expires_in: 900, interval: 5 },
      };
    }
    if (req.path === '/login/oauth/access_token') {
      assert.equal(form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:device_code');
      return { json: tokenReplies.get(form.get('device_code') ?? '') ?? { error: 'bad_verification_code' } };
    }
    return { status: 404, text: 'no' };
  });
  const config = `[catalog.copilot_oauth]\nclient_id = "test-client"\ndevice_code_url = "${server.url}/login/device/code"\ntoken_url = "${server.url}/login/oauth/access_token"\n`;
  return { server, tokenReplies, codes: () => codes, config };
}

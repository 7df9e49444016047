/** A local HTTP server for net's tests: fixed routes, every request recorded. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Hit {
  url: string;
  host?: string;
  method: string;
  body: string;
}

export interface TestServer {
  port: number;
  base: string;
  hits: Hit[];
  close(): Promise<void>;
}

export async function startServer(): Promise<TestServer> {
  const hits: Hit[] = [];
  let port = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push({ url: req.url ?? '', host: req.headers.host, method: req.method ?? '', body });
      const to = /^\/redirect\?to=(.*)$/.exec(req.url ?? '');
      if (to) return res.writeHead(302, { location: decodeURIComponent(to[1].replace('PORT', String(port))) }).end();
      if (req.url === '/json') {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ method: req.method, body }));
      }
      if (req.url === '/big') return res.end('z'.repeat(200));
      if (req.url === '/hang') return void res.write('partial'); // and never end
      if (req.url === '/events') {
        // One event now, the next only after the client has read the first: the body must stream.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: one\n\n');
        return void setTimeout(() => res.end('data: two\n\n'), 200);
      }
      res.writeHead(404).end('missing');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    hits,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Under `npm run dev`: GET / and the dev server's own paths come from Vite (services/dev-server.ts). */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Routes } from '@talon/module-sdk';
import type { ViteDevServer } from 'vite';
import { DEV_PREFIXES } from '../services/dev-server.ts';
import type { IncomingHttpHeaders } from 'node:http';
import { withAuthMode, type AuthMode } from '../services/page.ts';

/** Hands the raw request to Vite, with the headers the service's hooks already set (CSP and friends). */
function toVite(vite: ViteDevServer, request: FastifyRequest, reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
  reply.hijack();
  vite.middlewares(request.raw, reply.raw, () => {
    reply.raw.statusCode = 404;
    reply.raw.setHeader('content-type', 'application/json');
    reply.raw.end(JSON.stringify({ error: `not found: ${request.url}` }));
  });
}

export function devRoutes(app: Routes, appDir: string, vite: () => ViteDevServer | undefined, authMode: (headers: IncomingHttpHeaders) => AuthMode): void {
  const dev = (handler: (v: ViteDevServer, request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | void) => {
    return async (request: FastifyRequest, reply: FastifyReply) => {
      const v = vite();
      if (!v) return reply.code(503).header('retry-after', '1').send({ error: 'the dashboard dev server is starting' });
      return handler(v, request, reply);
    };
  };
  app.get(
    '/',
    { config: { public: true, quiet: true }, schema: { summary: 'The web dashboard and chat (Vite dev server)', tags: ['dashboard'] } },
    dev(async (v, request, reply) => {
      const html = await v.transformIndexHtml(request.url, await readFile(path.join(appDir, 'index.html'), 'utf8'));
      return reply.type('text/html; charset=utf-8').send(withAuthMode(html, authMode(request.headers)));
    }),
  );
  for (const prefix of DEV_PREFIXES) {
    app.get(prefix, { config: { public: true, quiet: true }, schema: { hide: true } }, dev(toVite));
  }
}

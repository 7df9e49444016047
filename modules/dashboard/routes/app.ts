/** GET / (the app) and GET /assets/:file (its hashed files). Both public: the app must load before sign-in. */
import type { FastifyReply } from 'fastify';
import type { Routes } from '@talon/module-sdk';
import { pickEncoding, type Asset, type Bundle } from '../services/assets.ts';
import type { IncomingHttpHeaders } from 'node:http';
import { withAuthMode, type AuthMode } from '../services/page.ts';

export interface AppState {
  bundle(): Bundle | undefined;
  /** How this request's browser gets in: the page says so, so the app asks for a key without first collecting a 401. */
  authMode(headers: IncomingHttpHeaders): AuthMode;
  /** Why there is no bundle: still building, or the build failed (its output). */
  pending(): { building: boolean; failure?: string };
}

const fileParams = {
  type: 'object',
  properties: { file: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$', maxLength: 200 } },
  required: ['file'],
} as const;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function send(reply: FastifyReply, a: Asset, acceptEncoding: string | undefined, cacheControl: string) {
  const { body, encoding } = pickEncoding(a, acceptEncoding);
  reply.header('content-type', a.type).header('vary', 'accept-encoding').header('cache-control', cacheControl);
  if (encoding) reply.header('content-encoding', encoding);
  return reply.send(body);
}

/** A page without script, for the seconds a first-start build takes (or when it failed). */
function notReady(reply: FastifyReply, state: AppState) {
  const { building, failure } = state.pending();
  const text = building
    ? '<p>The dashboard is being built (this happens once, when it was not built at install). This page reloads by itself in a few seconds.</p>'
    : `<p>The dashboard could not be built. Run <code>node scripts/build-dashboard.mjs</code> and restart. The build said:</p><pre>${escapeHtml(failure ?? 'nothing')}</pre>`;
  if (building) reply.header('retry-after', '3').header('refresh', '3');
  return reply
    .code(503)
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Talon</title></head><body><h1>Talon</h1>${text}<p>The API answers meanwhile: <a href="/api/health">/api/health</a>, <a href="/api/openapi.json">/api/openapi.json</a>.</p></body></html>`,
    );
}

export function appRoutes(app: Routes, state: AppState): void {
  app.get(
    '/',
    { config: { public: true, quiet: true }, schema: { summary: 'The web dashboard and chat (a single-page app)', tags: ['dashboard'] } },
    async (request, reply) => {
      const bundle = state.bundle();
      if (!bundle) return notReady(reply, state);
      // Never cached (the service's no-store): it names the current hashed assets, and the auth mode can change.
      return reply.type(bundle.index.type).send(withAuthMode(bundle.index.body.toString('utf8'), state.authMode(request.headers)));
    },
  );

  app.get(
    '/assets/:file',
    {
      config: { public: true, quiet: true },
      schema: { summary: 'A file of the dashboard (content-hashed name)', tags: ['dashboard'], params: fileParams, hide: true },
    },
    async (request, reply) => {
      const a = state.bundle()?.assets.get(request.params.file);
      if (!a) return reply.code(404).send({ error: `no dashboard asset named '${request.params.file}'` });
      return send(reply, a, request.headers['accept-encoding'], 'public, max-age=31536000, immutable');
    },
  );
}

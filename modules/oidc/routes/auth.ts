import { type FastifyReply, type FastifyRequest, type Routes, unauthorized } from '@talon/module-sdk';
import type { OidcConfig } from '../config.ts';
import type { CallbackParams, Flows } from '../services/flows.ts';
import type { Introspector } from '../services/introspect.ts';
import type { Providers } from '../services/providers.ts';
import { sessionCookie, type Sessions } from '../services/sessions.ts';

export interface AuthRouteDeps {
  config: () => OidcConfig;
  providers: Providers;
  flows: Flows;
  sessions: Sessions;
  introspector: Introspector;
}

const tags = ['auth'];
const open = { public: true } as const;
const providerParams = { type: 'object', properties: { provider: { type: 'string' } }, required: ['provider'] } as const;
const callbackFields = {
  type: 'object',
  properties: { code: { type: 'string' }, state: { type: 'string' }, error: { type: 'string' }, error_description: { type: 'string' } },
  additionalProperties: { type: 'string' },
} as const;
const introspectBody = {
  type: 'object',
  properties: { token: { type: 'string', minLength: 1, maxLength: 8192 }, provider: { type: 'string', minLength: 1 } },
  required: ['token'],
  additionalProperties: false,
} as const;

const baseUrl = (request: FastifyRequest) => `${request.protocol}://${request.headers.host ?? request.hostname}`;

export function authRoutes(app: Routes, deps: AuthRouteDeps): void {
  // The IdP may post the callback as a form (response_mode=form_post).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });

  app.get('/api/auth/providers', { config: open, schema: { summary: 'Configured sign-in providers', tags } }, async () => {
    const providers = deps.providers.list().map((p) => ({ id: p.id, display_name: p.display_name || p.id, login_url: `/api/auth/login/${p.id}` }));
    return { enabled: providers.length > 0, providers };
  });

  const login = async (request: FastifyRequest, reply: FastifyReply, id: string | undefined) => {
    const url = await deps.flows.begin(deps.providers.find(id), baseUrl(request));
    return reply.code(302).header('cache-control', 'no-store').redirect(url.href);
  };
  app.get('/api/auth/login', { config: open, schema: { summary: 'Redirects to the default provider sign-in', tags } }, (request, reply) =>
    login(request, reply, undefined),
  );
  app.get(
    '/api/auth/login/:provider',
    { config: open, schema: { summary: 'Redirects to the named provider sign-in', tags, params: providerParams } },
    (request, reply) => login(request, reply, request.params.provider),
  );

  const callback = async (request: FastifyRequest, reply: FastifyReply, params: CallbackParams) => {
    const done = await deps.flows.finish(params);
    const { token, expiresAt } = await deps.sessions.create(done.provider, done.profile, done.accessToken);
    request.log.info({ provider: done.provider, sub: done.profile.sub }, 'dashboard sign-in');
    const config = deps.config();
    reply.header('set-cookie', sessionCookie(config.cookie_name, token, config.session_ttl_secs, request.protocol === 'https'));
    reply.header('cache-control', 'no-store');
    if (String(request.headers.accept ?? '').includes('application/json'))
      return reply.send({ ok: true, provider: done.provider, user: done.profile, expires_at: expiresAt });
    return reply.code(303).redirect(config.post_login_redirect);
  };
  app.get('/api/auth/callback', { config: open, schema: { summary: 'Sign-in callback (query)', tags, querystring: callbackFields } }, (request, reply) =>
    callback(request, reply, request.query),
  );
  app.post('/api/auth/callback', { config: open, schema: { summary: 'Sign-in callback (form post)', tags, body: callbackFields } }, (request, reply) =>
    callback(request, reply, request.body),
  );

  app.get('/api/auth/userinfo', { schema: { summary: "The signed-in user's profile (from the provider's userinfo endpoint)", tags } }, async (request) => {
    const { session } = deps.sessions.fromHeaders(request.headers);
    if (session) return { auth_method: 'oidc', provider: session.provider, ...(await deps.introspector.profile(session)), expires_at: session.expiresAt };
    if (request.headers.authorization) return { auth_method: 'api_key' };
    throw unauthorized('not signed in');
  });

  app.post(
    '/api/auth/introspect',
    { schema: { summary: 'Validates an access token (or a session) and returns its metadata', tags, body: introspectBody } },
    async (request) => deps.introspector.introspect(request.body.token, request.body.provider),
  );

  const logout = async (request: FastifyRequest, reply: FastifyReply) => {
    const { token } = deps.sessions.fromHeaders(request.headers);
    const ended = await deps.sessions.end(token);
    const config = deps.config();
    reply.header('set-cookie', sessionCookie(config.cookie_name, '', 0, request.protocol === 'https'));
    return reply.send({ ok: true, signed_out: ended });
  };
  app.post('/auth/logout', { config: open, schema: { summary: 'Ends the dashboard session and clears its cookie', tags } }, logout);
  app.post('/api/auth/logout', { config: open, schema: { summary: 'Same as POST /auth/logout', tags } }, logout);
}

import type { FromSchema } from '@talon/module-sdk';

const provider = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,31}$', description: 'short name used in /api/auth/login/{id}' },
    display_name: { type: 'string', default: '', description: 'shown on the sign-in button; empty: the id' },
    issuer_url: { type: 'string', minLength: 1, description: 'the issuer; its /.well-known/openid-configuration is read' },
    client_id: { type: 'string', minLength: 1 },
    client_secret: { type: 'string', default: '', description: 'client secret (prefer client_secret_env)' },
    client_secret_env: { type: 'string', default: '', description: 'environment variable holding the client secret' },
    scopes: { type: 'array', items: { type: 'string' }, default: ['openid', 'profile', 'email'] },
    allowed_domains: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: 'e-mail domains allowed to sign in (verified e-mail required); empty: every account of this issuer',
    },
    redirect_url: {
      type: 'string',
      default: '',
      description: 'the callback URL registered at the provider; empty: <the URL of the request>/api/auth/callback',
    },
  },
  required: ['id', 'issuer_url', 'client_id'],
  additionalProperties: false,
} as const;

export const oidcConfigSchema = {
  type: 'object',
  properties: {
    providers: { type: 'array', items: provider, default: [], description: 'OpenID Connect providers for the dashboard sign-in; the first is the default' },
    session_ttl_secs: {
      type: 'integer',
      minimum: 60,
      maximum: 31536000,
      default: 86400,
      description: 'lifetime of a dashboard session (the cookie and the server side)',
    },
    cookie_name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', default: 'talon_session', description: 'name of the session cookie' },
    post_login_redirect: { type: 'string', pattern: '^/', default: '/', description: 'where the browser goes after signing in (a path of this service)' },
    require_email_verified: { type: 'boolean', default: true, description: 'with allowed_domains: the e-mail must be verified by the provider' },
    allow_hosts: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: 'identity providers (globs, IPs or CIDRs) reachable although private or loopback (a self-hosted IdP on the LAN)',
    },
  },
  additionalProperties: false,
} as const;

export type OidcConfig = FromSchema<typeof oidcConfigSchema, { keepDefaultedPropertiesOptional: false }>;
export type ProviderConfig = OidcConfig['providers'][number];

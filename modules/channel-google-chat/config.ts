/** The Google Chat adapter's own configure fields; `token` (the common secret) is the service account's JSON key. */
import type { ChannelFieldSchema } from '@talon/channels';

export const DEFAULT_API_URL = 'https://chat.googleapis.com';
export const DEFAULT_TOKEN_URL = 'https://oauth2.googleapis.com/token';
/** Google's published keys of the account that signs Chat's requests, as a JWK set. */
export const DEFAULT_JWKS_URL = 'https://www.googleapis.com/service_accounts/v1/jwk/chat@system.gserviceaccount.com';
export const DEFAULT_ISSUER = 'chat@system.gserviceaccount.com';
/** The route Google Chat POSTs interaction events to; the app's "HTTP endpoint URL" is its public address. */
export const EVENTS_ROUTE = '/api/channels/google_chat/events';

const URL_PATTERN = '^https?://[^/]+(/.*[^/])?$';

export const googleChatFields = {
  type: 'object',
  properties: {
    project_number: {
      type: 'string',
      pattern: '^[0-9]{1,20}$',
      description: "the Google Cloud project's number: the audience of the tokens Chat signs its requests with",
    },
    api_url: { type: 'string', pattern: URL_PATTERN, description: `Chat REST API root (default ${DEFAULT_API_URL})` },
    token_url: { type: 'string', pattern: URL_PATTERN, description: `OAuth 2.0 token endpoint (default ${DEFAULT_TOKEN_URL})` },
    jwks_url: { type: 'string', pattern: URL_PATTERN, description: `the keys Chat signs with, as a JWK set (default Google's: ${DEFAULT_JWKS_URL})` },
    issuer: { type: 'string', pattern: '^\\S{1,200}$', description: `the issuer of Chat's tokens (default ${DEFAULT_ISSUER})` },
  },
  required: ['project_number'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;

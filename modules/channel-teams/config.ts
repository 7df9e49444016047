/** The Teams adapter's own configure fields (the app password is the channels module's common `token` secret). */
import type { ChannelFieldSchema } from '@talon/channels';

/** Where the Bot Framework publishes the keys it signs activities with. */
export const DEFAULT_OPENID_URL = 'https://login.botframework.com/v1/.well-known/openidconfiguration';
/** The client-credentials token endpoint of the Bot Framework's tenant (multi-tenant bots). */
export const DEFAULT_TOKEN_URL = 'https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token';
/** Teams' global connector, which takes proactive messages to conversations no activity came from yet. */
export const DEFAULT_SERVICE_URL = 'https://smba.trafficmanager.net/teams/';
/** The route the bot's messaging endpoint points at: https://<public host>/api/channels/teams/messages. */
export const MESSAGES_ROUTE = '/api/channels/teams/messages';

export const teamsFields = {
  type: 'object',
  properties: {
    app_id: { type: 'string', minLength: 1, description: "the bot's Microsoft App ID (the audience of every activity's token)" },
    openid_url: {
      type: 'string',
      pattern: '^https?://\\S+$',
      description: `the Bot Framework's OpenID metadata, whose jwks_uri holds the signing keys (default ${DEFAULT_OPENID_URL})`,
    },
    token_url: {
      type: 'string',
      pattern: '^https?://\\S+$',
      description: `the client-credentials token endpoint for replies (default ${DEFAULT_TOKEN_URL}; a single-tenant bot uses its tenant's)`,
    },
    service_url: {
      type: 'string',
      pattern: '^https?://\\S+$',
      description: `the connector for conversations no activity came from yet (proactive sends; default ${DEFAULT_SERVICE_URL}); it must pass the same allowlist`,
    },
    service_url_allow: {
      type: 'string',
      pattern: '^https?://[^/]+/?$',
      description:
        'one more origin replies may go to besides https://*.botframework.com and https://*.trafficmanager.net (a Bot Framework emulator or a test connector)',
    },
  },
  required: ['app_id'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;

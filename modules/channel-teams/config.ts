/** The Teams adapter's own configure fields (the app password is the channels module's common `token` secret). */
import type { ChannelFieldSchema } from '@talon/channels';

/** Where the Bot Framework publishes the keys it signs activities with. */
export const DEFAULT_OPENID_URL = 'https://login.botframework.com/v1/.well-known/openidconfiguration';
/** The client-credentials token endpoint of the Bot Framework's tenant (multi-tenant bots). */
export const DEFAULT_TOKEN_URL = 'https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token';
/** Teams' global connector, which takes proactive messages to conversations no activity came from yet. */
export const DEFAULT_SERVICE_URL = 'https://smba.trafficmanager.net/teams/';
/**
 * The hosts replies may go to unless service_url_hosts says otherwise (https only; `*.` a domain's subdomains): the
 * Bot Framework's service URL hosts. Teams' public connector is smba.trafficmanager.net (its region paths /amer/,
 * /emea/, /apac/, /teams/ …); the Bot Framework's other channels are under botframework.com; Teams' US government
 * clouds have their own: GCC smba.infra.gcc.teams.microsoft.com, GCC High smba.infra.gov.teams.microsoft.us, DoD
 * smba.infra.dod.teams.microsoft.us — Microsoft's well-known Teams service endpoints, in the M365 Agents SDK
 * (https://learn.microsoft.com/en-us/dotnet/api/microsoft.agents.extensions.msteams.teamsproactiveserviceendpoints and
 * https://microsoft.github.io/Agents-for-js/variables/_microsoft_agents-hosting.TeamsServiceEndpoints.html).
 */
export const DEFAULT_SERVICE_URL_HOSTS: readonly string[] = [
  'smba.trafficmanager.net',
  '*.botframework.com',
  'smba.infra.gcc.teams.microsoft.com',
  'smba.infra.gov.teams.microsoft.us',
  'smba.infra.dod.teams.microsoft.us',
];
/** A host name, or `*.` and a domain of at least two labels. */
const HOST = '^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$';
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
    service_url_hosts: {
      type: 'array',
      items: { type: 'string', pattern: HOST, maxLength: 253 },
      minItems: 1,
      maxItems: 32,
      uniqueItems: true,
      description: `the hosts replies may go to over https, each exact or *.domain for the names under it; replaces the default (${DEFAULT_SERVICE_URL_HOSTS.join(', ')}), so give those too when adding a sovereign cloud's`,
    },
    service_url_allow: {
      type: 'string',
      pattern: '^https?://[^/]+/?$',
      description: 'one more origin replies may go to besides the https hosts of service_url_hosts (a Bot Framework emulator or a test connector)',
    },
  },
  required: ['app_id'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;

/**
 * The WhatsApp adapter's own configure fields (the access token is the channels module's common `token` secret). The
 * Cloud API fields are checked when a cloud channel starts; web mode signs in by QR code and needs none of them.
 */
import type { ChannelFieldSchema } from '@talon/channels';

export const DEFAULT_API_URL = 'https://graph.facebook.com/v21.0';
/** The callback URL's path on this service: Meta's verification GET and the signed webhook POSTs. */
export const WEBHOOK_ROUTE = '/api/channels/whatsapp/webhook';

export type WhatsAppMode = 'cloud' | 'web';
/** The configured mode; cloud when none is set (the channel's first and default mode). */
export const modeOf = (config: Readonly<Record<string, unknown>>): WhatsAppMode => (config.mode === 'web' ? 'web' : 'cloud');

export const whatsappFields = {
  type: 'object',
  properties: {
    mode: {
      type: 'string',
      enum: ['cloud', 'web'],
      description:
        'cloud (the default): the WhatsApp Business Cloud API, messages in by webhook; web: WhatsApp Web (Baileys) on a phone number signed in by QR code',
    },
    phone_number_id: { type: 'string', pattern: '^[0-9]{1,32}$', description: 'the business phone number ID (WhatsApp → API Setup), not the phone number' },
    verify_token: { type: 'string', minLength: 1, description: "a string of your choice, given again as the webhook's Verify token (a secret)" },
    app_secret: { type: 'string', minLength: 1, description: "the Meta app's App Secret (App settings → Basic), which signs every webhook (a secret)" },
    api_url: {
      type: 'string',
      pattern: '^https?://[^/]+(/.*[^/])?$',
      description: `the Graph API root with its version, without a trailing slash (default ${DEFAULT_API_URL})`,
    },
  },
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;

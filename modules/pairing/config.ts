import type { FromSchema } from '@talon/module-sdk';

export const pairingConfigSchema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean', default: false, description: 'serve the /api/pairing endpoints (they answer 404 while off)' },
    max_devices: { type: 'integer', minimum: 1, maximum: 1000, default: 10, description: 'paired devices at most' },
    code_ttl_secs: { type: 'integer', minimum: 30, maximum: 3600, default: 300, description: 'lifetime of a pairing code' },
    max_pending_codes: { type: 'integer', minimum: 1, maximum: 100, default: 5, description: 'unused, unexpired pairing codes at once' },
    public_base_url: { type: 'string', default: '', description: 'base URL a device should use (in the QR payload); empty: the URL the request came to' },
    push_provider: { type: 'string', enum: ['none', 'ntfy', 'gotify'], default: 'none', description: 'how POST /api/pairing/notify reaches devices' },
    ntfy_url: { type: 'string', default: 'https://ntfy.sh', description: 'ntfy server' },
    ntfy_topic: { type: 'string', default: '', description: 'ntfy topic for devices that registered no push token of their own' },
    gotify_url: { type: 'string', default: '', description: 'Gotify server' },
    gotify_token_env: { type: 'string', default: 'GOTIFY_APP_TOKEN', description: 'environment variable with the Gotify application token' },
    allow_hosts: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: 'push servers (globs, IPs or CIDRs) allowed although private or loopback (a self-hosted ntfy on the LAN)',
    },
  },
  additionalProperties: false,
} as const;

export type PairingConfig = FromSchema<typeof pairingConfigSchema, { keepDefaultedPropertiesOptional: false }>;

import { pageQueryProperties } from '@talon/module-sdk';

export const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

const url = { type: 'string', minLength: 1, maxLength: 2048, description: 'http(s) target; private and loopback hosts need [webhooks] allow_hosts' } as const;
const secret = { type: 'string', minLength: 8, maxLength: 256, description: 'HMAC-SHA256 signing secret; never read back' } as const;
const events = {
  type: 'array',
  items: { type: 'string', minLength: 1 },
  minItems: 1,
  maxItems: 32,
  description: 'event names (see docs/webhooks.md), or all',
} as const;

export const eventHookBody = {
  type: 'object',
  properties: {
    event_type: { type: 'string', minLength: 1, description: 'the event that triggers a delivery, e.g. agent_spawned' },
    url,
    secret,
    enabled: { type: 'boolean' },
  },
  required: ['event_type', 'url', 'secret'],
  additionalProperties: false,
} as const;

export const eventHookPatch = {
  type: 'object',
  properties: { event_type: { type: 'string', minLength: 1 }, url, secret, enabled: { type: 'boolean' } },
  additionalProperties: false,
} as const;

export const outboundBody = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 128 }, url, events, secret, enabled: { type: 'boolean' } },
  required: ['name', 'url', 'events'],
  additionalProperties: false,
} as const;

export const outboundPatch = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 128 }, url, events, secret: { ...secret, minLength: 0 }, enabled: { type: 'boolean' } },
  additionalProperties: false,
} as const;

export const deliveriesQuery = { type: 'object', properties: { ...pageQueryProperties } } as const;

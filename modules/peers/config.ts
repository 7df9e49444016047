import type { FromSchema } from '@talon/module-sdk';

const address = { type: 'string', pattern: '^(\\[[0-9a-fA-F:]+\\]|[^:\\s]+):[0-9]{1,5}$' } as const;

export const peersConfigSchema = {
  type: 'object',
  properties: {
    listen: { anyOf: [{ const: '' }, address], default: '', description: 'host:port peers connect to; empty: accept no peers' },
    connect: { type: 'array', items: address, default: [], description: 'host:port of peers to connect to (reconnected when the link drops)' },
    shared_secret: {
      type: 'string',
      default: '',
      anyOf: [{ const: '' }, { minLength: 16 }],
      'x-error': 'use a random secret of at least 16 characters, the same on every node',
      description: 'the secret every node of the network shares; without it no peer traffic is accepted',
    },
    node_id: { type: 'string', default: '', maxLength: 128, description: "this node's id; empty: one is generated and kept in the module's data folder" },
    node_name: { type: 'string', default: '', maxLength: 128, description: 'a name shown to peers; empty: the host name' },
    max_peers: { type: 'integer', minimum: 1, maximum: 1000, default: 50, description: 'connected peers at most' },
    messages_per_minute: { type: 'integer', minimum: 1, maximum: 1000000, default: 600, description: 'agent messages one peer may send per minute' },
    reconnect_ms: { type: 'integer', minimum: 50, maximum: 600000, default: 2000, description: 'wait before reconnecting to a peer of connect' },
    request_timeout_secs: { type: 'integer', minimum: 1, maximum: 3600, default: 300, description: 'how long a request to a peer may take (an agent turn)' },
  },
  additionalProperties: false,
} as const;

export type PeersConfig = FromSchema<typeof peersConfigSchema, { keepDefaultedPropertiesOptional: false }>;

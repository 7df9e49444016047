import type { FromSchema } from '@talon/module-sdk';

/** One `[channels.<name>]` table: the common fields, `<field>_env` naming the env var of a secret, the adapter's own. */
const channelTable = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean', description: 'false: configured but not started' },
    agent_name: { type: 'string', minLength: 1, description: 'the agent messages go to when no binding routes them' },
    dm_policy: { enum: ['pairing', 'allowlist', 'open', 'disabled'], description: 'who may write in a direct message' },
    group_policy: { enum: ['mention', 'all', 'disabled'], description: 'which group messages reach the agent' },
    allowed_users: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'senders always admitted' },
    default_conversation: { type: 'string', minLength: 1, description: 'chat id for /test and background replies' },
    owners: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'sender ids that receive owner notices' },
    message_coalesce_window_ms: {
      type: 'integer',
      minimum: 0,
      maximum: 60000,
      description: 'messages from one sender within this many ms of each other are joined into one turn (0: off)',
    },
    token_env: { type: 'string', minLength: 1, description: 'name of the environment variable holding the token' },
  },
  additionalProperties: true,
} as const;

export const channelsConfigSchema = {
  type: 'object',
  properties: {
    not_after_minutes: {
      type: 'integer',
      minimum: 1,
      maximum: 10080,
      default: 60,
      description: 'a reply not sent within this long after its turn is kept and shown, never sent late into a chat',
    },
    rate_per_minute: { type: 'integer', minimum: 1, maximum: 10000, default: 20, description: 'messages per sender and minute that reach the agent' },
    pairing_ttl_minutes: { type: 'integer', minimum: 1, maximum: 10080, default: 60, description: 'how long a pairing code waits for the owner' },
  },
  additionalProperties: channelTable,
  default: {},
  description: 'messaging channels; [channels.<name>] configures one (secrets by env var name: token_env)',
} as const;

export type ChannelsConfig = FromSchema<typeof channelsConfigSchema, { keepDefaultedPropertiesOptional: false }>;
export type ChannelTable = FromSchema<typeof channelTable>;

/**
 * The adapter's own configure fields (the common ones — agent_name, dm_policy, group_policy, allowed_users, … — and
 * `token` belong to the channels module). `token` is the Gotify **client** token: it reads the stream and the
 * applications; `app_token` is the **application** token replies are posted with.
 */
import type { ChannelFieldSchema } from '@talon/channels';

export const gotifyFields = {
  type: 'object',
  properties: {
    url: { type: 'string', pattern: '^https?://', description: "the Gotify server's root, e.g. https://push.example.com" },
    app_token: { type: 'string', minLength: 1, description: 'token of the Gotify application replies are posted as (a secret)' },
    direct_apps: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description:
        "ids of the applications whose messages are direct messages to the agent (dm_policy); every other application's are group messages (group_policy)",
    },
    bot_name: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,32}$',
      description: "a group message mentions the bot by starting with '@<bot_name>' (default 'talon')",
    },
    priority: { type: 'integer', minimum: 0, maximum: 10, description: 'priority of the replies (default 5)' },
    catch_up_minutes: {
      type: 'integer',
      minimum: 0,
      maximum: 1440,
      description: 'at start, messages up to this old that the journal has not seen are answered (default 10; 0: only new ones)',
    },
  },
  required: ['url'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;

export const DEFAULT_BOT_NAME = 'talon';
export const DEFAULT_PRIORITY = 5;
export const DEFAULT_CATCH_UP_MINUTES = 10;

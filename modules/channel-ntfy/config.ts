/** The ntfy adapter's configure fields (besides the common ones and `token`, here the access token). */
import type { ChannelFieldSchema } from '@talon/channels';

/** ntfy's topic names: letters, digits, '-' and '_', up to 64 (its own rule). */
export const TOPIC = '[-_A-Za-z0-9]{1,64}';

export const ntfyFields = {
  type: 'object',
  properties: {
    server_url: { type: 'string', pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$', description: 'the ntfy server (default https://ntfy.sh)' },
    topic: {
      type: 'string',
      pattern: `^${TOPIC}(,${TOPIC}){0,49}$`,
      description: 'the topic the bot listens and answers on; several as a comma-separated list, each its own conversation',
    },
  },
  required: ['topic'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;

export interface NtfySettings {
  /** Without a trailing slash. */
  server: string;
  topics: string[];
  token?: string;
}

export function ntfySettings(config: Readonly<Record<string, unknown>>, secrets: Readonly<Record<string, string | undefined>>): NtfySettings {
  return {
    server: (typeof config.server_url === 'string' ? config.server_url : 'https://ntfy.sh').replace(/\/+$/, ''),
    topics: String(config.topic).split(','),
    ...(secrets.token ? { token: secrets.token } : {}),
  };
}

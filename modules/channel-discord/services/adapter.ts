/** The Discord adapter's declaration: its fields, what it can do, and Discord's message limits. */
import type { ChannelAdapter } from '@talon/channels';
import { startDiscord } from './connection.ts';
import { DEFAULT_API_URL } from './rest.ts';

export function discordAdapter(): ChannelAdapter {
  return {
    name: 'discord',
    description: 'Discord bot: direct messages and guild channels (mention gating, replies in threads) over the Gateway and REST v10',
    fields: {
      type: 'object',
      properties: {
        api_url: { type: 'string', minLength: 1, description: `Discord's REST root without the version (default ${DEFAULT_API_URL})` },
      },
      additionalProperties: false,
    },
    secretFields: [],
    urlFields: ['api_url'],
    // media: files out as uploads, attachments in downloaded (up to 10 MB); edits: replies are not streamed.
    capabilities: { threads: true, media: true, typing: true, edits: false, qr: false, platformDedup: true },
    // Discord counts code points: 2,000 per message, and a message over 17 lines is collapsed in the client.
    limits: { maxLength: 2000, unit: 'chars', maxLines: 17, format: 'markdown' },
    start: startDiscord,
  };
}

/** The XMPP adapter's configure fields (besides the common ones and `token`, the account's password). */
import type { ChannelFieldSchema } from '@talon/channels';

/** A bare JID's local part (RFC 7622 forbids these characters in it), for `username` and the rooms. */
const LOCAL = '[^\\s"&\'/:<>@]{1,1023}';
const DOMAIN = '[A-Za-z0-9.-]{1,253}';

export const xmppFields = {
  type: 'object',
  properties: {
    service: {
      type: 'string',
      pattern: '^(xmpp|xmpps)://[A-Za-z0-9.:\\[\\]-]{1,260}$',
      description: 'where to connect: xmpp://host:5222 (STARTTLS when the server offers it) or xmpps://host:5223 (direct TLS)',
    },
    domain: { type: 'string', pattern: `^${DOMAIN}$`, description: 'the XMPP domain of the account (the part after @ of its JID)' },
    username: { type: 'string', pattern: `^${LOCAL}$`, description: 'the account’s local part (the part before @ of its JID)' },
    rooms: {
      type: 'array',
      items: { type: 'string', pattern: `^${LOCAL}@${DOMAIN}$` },
      maxItems: 50,
      uniqueItems: true,
      description: 'multi-user chat rooms to join, as bare JIDs, e.g. ["team@conference.example.org"]',
    },
    nick: {
      type: 'string',
      pattern: '^[^\\s/]{1,64}$',
      description: 'the bot’s nickname in the rooms (default: the username); a room message naming it is for the bot',
    },
  },
  required: ['service', 'domain', 'username'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;

export interface XmppSettings {
  service: string;
  domain: string;
  username: string;
  /** The account's password, from the vault (`token`). */
  password: string;
  /** Bare room JIDs, lower-cased (JIDs compare case-insensitively in their local and domain parts). */
  rooms: string[];
  nick: string;
}

/** The settings from the context's validated fields and secrets. */
export function xmppSettings(config: Readonly<Record<string, unknown>>, secrets: Readonly<Record<string, string | undefined>>): XmppSettings {
  const username = String(config.username);
  return {
    service: String(config.service),
    domain: String(config.domain),
    username,
    password: secrets.token ?? '',
    rooms: Array.isArray(config.rooms) ? config.rooms.map((r) => String(r).toLowerCase()) : [],
    nick: typeof config.nick === 'string' && config.nick ? config.nick : username,
  };
}

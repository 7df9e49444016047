/** The IRC adapter's configure fields (besides the common ones and `token`, here the optional server password). */
import type { FromSchema } from '@talon/module-sdk';
import type { ChannelFieldSchema } from '@talon/channels';

/** RFC 2812's nickname characters; 30 is the longest nick common servers accept (ngircd's MaxNickLength). */
const NICK = '^[A-Za-z\\[\\]\\\\`_^{|}][A-Za-z0-9\\[\\]\\\\`_^{|}-]{0,29}$';
/** A channel name: a channel prefix, then no space, comma, colon, BEL or NUL (RFC 2812 1.3), at most 50 bytes. */
const CHANNEL = '^[#&+!][^\\s,:\\x07\\x00]{1,49}$';

export const ircFields = {
  type: 'object',
  properties: {
    server: { type: 'string', pattern: '^[A-Za-z0-9.:\\[\\]-]{1,253}$', description: 'host name or address of the IRC server' },
    port: { type: 'integer', minimum: 1, maximum: 65535, description: 'TCP port; default 6697 with tls, 6667 without' },
    tls: { type: 'boolean', description: 'connect with TLS (default true)' },
    nick: { type: 'string', pattern: NICK, description: 'the bot’s nickname; a channel line is for the bot when it starts with "<nick>:" or "<nick>,"' },
    channels: {
      type: 'array',
      items: { type: 'string', pattern: CHANNEL },
      maxItems: 50,
      uniqueItems: true,
      description: 'channels to join, e.g. ["#talon"]',
    },
  },
  required: ['server', 'nick'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;

export interface IrcSettings {
  server: string;
  port: number;
  tls: boolean;
  nick: string;
  channels: string[];
  /** The server password (PASS), from the vault. */
  password?: string;
}

/** The settings from the context's validated fields and secrets. */
export function ircSettings(config: Readonly<Record<string, unknown>>, secrets: Readonly<Record<string, string | undefined>>): IrcSettings {
  const tls = config.tls !== false;
  return {
    server: String(config.server),
    port: typeof config.port === 'number' ? config.port : tls ? 6697 : 6667,
    tls,
    nick: String(config.nick),
    channels: Array.isArray(config.channels) ? config.channels.map(String) : [],
    ...(secrets.token ? { password: secrets.token } : {}),
  };
}

/** The module's own table, `[channel_irc]` in config.toml: the connection's timing. */
export const ircModuleConfigSchema = {
  type: 'object',
  properties: {
    ping_interval_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: 600,
      default: 30,
      description: 'the bot PINGs the server this often; three intervals without a line from the server rebuild the connection',
    },
  },
  additionalProperties: false,
  default: {},
} as const;

export type IrcModuleConfig = FromSchema<typeof ircModuleConfigSchema, { keepDefaultedPropertiesOptional: false }>;

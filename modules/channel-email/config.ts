/** The email channel's own configure fields (the password is the common `token`, kept in the vault). */
import type { ChannelFieldSchema } from '@talon/channels';

const host = { type: 'string', minLength: 1, maxLength: 253 } as const;
const port = { type: 'integer', minimum: 1, maximum: 65535 } as const;
/** One bare address: `from` becomes a header, so a list or a display name with line breaks is refused here. */
const address = { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^\\s<>@,;:"]+@[^\\s<>@,;:"]+$' } as const;

export const emailFields = {
  type: 'object',
  properties: {
    imap_host: { ...host, description: 'IMAP server the INBOX is read from' },
    imap_port: { ...port, description: 'IMAP port: 993 (implicit TLS, the default) or 143 (STARTTLS)' },
    smtp_host: { ...host, description: 'SMTP submission server replies are sent through' },
    smtp_port: { ...port, description: 'SMTP port: 465 (implicit TLS, the default) or 587 (STARTTLS)' },
    username: { type: 'string', minLength: 1, maxLength: 254, description: 'login name for IMAP and SMTP alike' },
    tls: {
      type: 'boolean',
      description:
        'true (the default): never log in without TLS (implicit TLS on 993/465, STARTTLS required on other ports); false: STARTTLS only when offered, for a server on a trusted network',
    },
    from: { ...address, description: 'the From address of replies (default: username, when it is an address)' },
  },
  required: ['imap_host', 'smtp_host', 'username'],
} satisfies ChannelFieldSchema;

export interface EmailSettings {
  imapHost: string;
  imapPort: number;
  smtpHost: string;
  smtpPort: number;
  username: string;
  password: string;
  tls: boolean;
  from: string;
}

/** The settings with their defaults; the channels module validated the fields against `emailFields` already. */
export function emailSettings(config: Readonly<Record<string, unknown>>, secrets: Readonly<Record<string, string | undefined>>): EmailSettings {
  const text = (key: string) => (typeof config[key] === 'string' ? (config[key] as string) : '');
  const num = (key: string, fallback: number) => (typeof config[key] === 'number' ? (config[key] as number) : fallback);
  const username = text('username');
  return {
    imapHost: text('imap_host'),
    imapPort: num('imap_port', 993),
    smtpHost: text('smtp_host'),
    smtpPort: num('smtp_port', 465),
    username,
    password: secrets.token ?? '',
    tls: config.tls !== false,
    from: text('from') || username,
  };
}

import { ImapFlow } from 'imapflow';
import { simpleParser, type ParsedMail } from 'mailparser';
import { startAgentTestKernel, waitFor, type AgentTestKernel, type ImapServer, type ScriptedReply, type SmtpSink } from '@talon/testing';

export const BOT = 'bot@talon.test';
export const PASSWORD = 'imap-test-password';

export async function startEmailKernel(script: ScriptedReply[] = []): Promise<AgentTestKernel> {
  return startAgentTestKernel({ only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'channels', 'channel-email'], script });
}

export async function configure(k: AgentTestKernel, imap: ImapServer, smtp: SmtpSink, over: Record<string, unknown> = {}): Promise<Response> {
  return k.request('/api/channels/email/configure', {
    method: 'POST',
    json: {
      token: PASSWORD,
      agent_name: 'helper',
      dm_policy: 'open',
      imap_host: imap.host,
      imap_port: imap.port,
      smtp_host: smtp.host,
      smtp_port: smtp.port,
      username: BOT,
      tls: false,
      ...over,
    },
  });
}

export async function channel(k: AgentTestKernel): Promise<{ state: string; last_error: string | null }> {
  return (await (await k.request('/api/channels/email')).json()) as { state: string; last_error: string | null };
}

/** A raw RFC 5322 mail with CRLF lines. */
export function mail(m: { id?: string; from?: string; subject?: string; body?: string; headers?: Record<string, string>; contentType?: string }): string {
  const headers: Record<string, string> = {
    From: m.from ?? 'Alice Example <alice@example.test>',
    To: BOT,
    Subject: m.subject ?? 'Lunch?',
    Date: new Date().toUTCString(),
    ...(m.id ? { 'Message-ID': m.id } : {}),
    'MIME-Version': '1.0',
    'Content-Type': m.contentType ?? 'text/plain; charset=utf-8',
    ...m.headers,
  };
  return `${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n${(m.body ?? 'Shall we have lunch at noon?').replace(/\r?\n/g, '\r\n')}\r\n`;
}

/** Runs fn on a client of our own logged into the bot's INBOX. */
export async function withMailbox<T>(imap: ImapServer, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
  const client = new ImapFlow({ host: imap.host, port: imap.port, secure: false, auth: { user: BOT, pass: PASSWORD }, logger: false });
  await client.connect();
  try {
    await client.mailboxOpen('INBOX');
    return await fn(client);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

/** Message-ID → whether the mail is flagged \Seen. */
export async function seen(imap: ImapServer): Promise<Map<string, boolean>> {
  return withMailbox(imap, async (client) => {
    const out = new Map<string, boolean>();
    for await (const m of client.fetch('1:*', { envelope: true, flags: true })) out.set(m.envelope?.messageId ?? '', m.flags?.has('\\Seen') ?? false);
    return out;
  });
}

export async function sentMail(smtp: SmtpSink, count: number): Promise<ParsedMail[]> {
  await waitFor(async () => smtp.messages.length >= count, 15_000, `${count} mail(s) at the SMTP sink`);
  return Promise.all(smtp.messages.map((m) => simpleParser(m.raw)));
}

/** The text of every user message the scripted provider was asked with. */
export function userTexts(k: AgentTestKernel): string[] {
  return k.fake.requests.flatMap((r) =>
    ((r.body.messages as Array<{ role: string; content: unknown }> | undefined) ?? [])
      .filter((m) => m.role === 'user')
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))),
  );
}

export const until = (fn: () => Promise<boolean> | boolean, what: string) => waitFor(async () => fn(), 15_000, what);

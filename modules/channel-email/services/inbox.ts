/**
 * The INBOX side: one IMAP connection kept up by the kit's reconnect loop. New mail is noticed by IDLE (imapflow idles
 * on its own and falls back to NOOP polling where the server has no IDLE) and by a periodic search, which also catches
 * a mail whose commit failed and feeds the liveness watchdog. Each unseen mail is handed to the journal and flagged
 * \Seen only once emit resolved: a crash before the flag leaves it unseen, and its next delivery is a duplicate the
 * journal drops. imapflow opens its own socket (not the net module's fetch): it goes only to the configured imap_host.
 */
import { ImapFlow } from 'imapflow';
import type { AdapterContext, ChannelKit } from '@talon/channels';
import type { EmailSettings } from '../config.ts';
import { describeMailError, isImapAuthError } from './errors.ts';
import { MAIL_CAP_BYTES, parseMail, parseReplyContext, type ReplyContext } from './parse.ts';

export interface InboxOptions {
  /** How often the INBOX is searched besides IDLE (ms). */
  pollMs?: number;
}

const DEFAULT_POLL_MS = 60_000;
/** Reply contexts of recent mail kept in memory; older ones are read back from the server. */
const CONTEXTS_KEPT = 1000;

type ReconnectLink = Parameters<ConstructorParameters<ChannelKit['Reconnector']>[0]['connect']>[0];

export class Inbox {
  private client: ImapFlow | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private readonly contexts = new Map<string, ReplyContext>();
  private readonly pollMs: number;
  private readonly own: string[];

  constructor(
    private readonly settings: EmailSettings,
    private readonly ctx: AdapterContext,
    private readonly kit: ChannelKit,
    options: InboxOptions = {},
  ) {
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.own = [settings.from, settings.username].filter((a) => a.includes('@')).map((a) => a.toLowerCase());
  }

  /** Runs the connection until the adapter stops; an auth failure ends it with state error and last_error. */
  async run(): Promise<void> {
    const { ctx } = this;
    const loop = new this.kit.Reconnector({
      connect: (link) => this.session(link),
      teardown: () => this.close(),
      isAuthError: isImapAuthError,
      describe: describeMailError,
      // Three missed polls: the connection looks open but answers nothing.
      livenessMs: this.pollMs * 3,
      signal: ctx.signal,
      onState: (health) => {
        if (health.state === 'ready') ctx.report('connected');
        else if (health.state === 'stopped') ctx.report('error', health.lastError ?? 'stopped');
        else if (health.state === 'connecting' || health.state === 'waiting') ctx.report('connecting', health.lastError ?? undefined);
      },
    });
    const end = await loop.run();
    if (end.state === 'stopped') ctx.log.warn({ error: end.lastError }, 'email channel stopped');
  }

  /** The subject and References of a mail of this INBOX by its Message-ID, for a reply to it. */
  async replyContext(messageId: string): Promise<ReplyContext | undefined> {
    const known = this.contexts.get(messageId);
    if (known) return known;
    const client = this.client;
    if (!client?.usable) return undefined;
    const uids = await client.search({ header: { 'message-id': messageId } }, { uid: true });
    const uid = uids ? uids[uids.length - 1] : undefined;
    if (uid === undefined) return undefined;
    const found = await client.fetchOne(String(uid), { headers: ['subject', 'references', 'in-reply-to'] }, { uid: true });
    return found && found.headers ? parseReplyContext(found.headers) : undefined;
  }

  private async session(link: ReconnectLink): Promise<void> {
    const { settings } = this;
    const client = new ImapFlow({
      host: settings.imapHost,
      port: settings.imapPort,
      secure: settings.tls && settings.imapPort === 993,
      // With tls, credentials never cross in the clear: STARTTLS is required where TLS is not implicit.
      ...(settings.tls && settings.imapPort !== 993 ? { doSTARTTLS: true } : {}),
      auth: { user: settings.username, pass: settings.password },
      logger: false,
      // Servers drop an IDLE after 30 minutes; restarting it earlier keeps the connection in use.
      maxIdleTime: 5 * 60_000,
      // IDLE (the only way the server tells of new mail) resumes one second after our last command, not fifteen.
      autoIdleDelay: 1000,
      missingIdleCommand: 'NOOP',
    });
    this.client = client;
    const closed = new Promise<void>((resolve, reject) => {
      client.on('close', () => resolve());
      client.on('error', (err: Error) => reject(err));
    });
    await client.connect();
    await client.mailboxOpen('INBOX');
    link.ready();
    client.on('exists', () => void this.drain(link));
    const timer = setInterval(() => void this.drain(link), this.pollMs);
    try {
      // Not awaited: a stop must not wait on an emit in flight (its mail stays unseen and is read again).
      void this.drain(link);
      await Promise.race([closed, new Promise<void>((resolve) => link.signal.addEventListener('abort', () => resolve(), { once: true }))]);
    } finally {
      clearInterval(timer);
    }
  }

  private close(): void {
    const client = this.client;
    this.client = undefined;
    client?.close();
  }

  /** One drain at a time; a request during one runs another after it (the mail that woke it may be past its search). */
  private drain(link: ReconnectLink): Promise<void> {
    if (this.draining) {
      this.again = true;
      return this.draining;
    }
    const run = async () => {
      do {
        this.again = false;
        await this.drainOnce(link);
      } while (this.again && !link.signal.aborted);
    };
    this.draining = run()
      .catch((err: unknown) => {
        if (!link.signal.aborted) this.ctx.log.warn({ error: describeMailError(err) }, 'reading the INBOX failed; retried on the next poll');
      })
      .finally(() => (this.draining = undefined));
    return this.draining;
  }

  private async drainOnce(link: ReconnectLink): Promise<void> {
    const client = this.client;
    if (!client?.usable || link.signal.aborted) return;
    const uids = (await client.search({ seen: false }, { uid: true })) || [];
    link.traffic();
    const validity = client.mailbox ? String(client.mailbox.uidValidity) : '0';
    for (const uid of uids.sort((a, b) => a - b)) {
      if (link.signal.aborted || !client.usable) return;
      const mail = await client.fetchOne(String(uid), { size: true, source: { maxLength: MAIL_CAP_BYTES } }, { uid: true });
      if (!mail || !mail.source) continue;
      const parsed = await parseMail(mail.source, {
        fallbackId: `imap:${validity}:${uid}`,
        truncated: (mail.size ?? 0) > MAIL_CAP_BYTES,
        own: this.own,
      });
      if (parsed.kind === 'skip') {
        this.ctx.log.info({ platformId: parsed.platformId, reason: parsed.reason }, 'mail not answered');
      } else {
        this.remember(parsed.message.platformId, parsed.context);
        // Rejects when the commit failed: the mail stays unseen and is read again on the next poll, in order.
        await this.ctx.emit(parsed.message);
      }
      await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true });
      link.traffic();
    }
  }

  private remember(messageId: string, context: ReplyContext): void {
    this.contexts.delete(messageId);
    this.contexts.set(messageId, context);
    if (this.contexts.size > CONTEXTS_KEPT) this.contexts.delete(this.contexts.keys().next().value!);
  }
}

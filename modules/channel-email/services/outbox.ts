/**
 * The SMTP side: each chunk is one mail through nodemailer, a proper reply when it answers one (Subject "Re: …",
 * In-Reply-To the mail answered, References its chain plus that mail), from the configured `from`. The body is the
 * kit's plain text of the Markdown, with an HTML alternative from the kit's HTML renderer: its small tag subset with
 * every text escaped and only http/https/mailto links, so nothing the model writes becomes markup or script. A chunk's
 * file goes as an attachment of its mail (the channels module sends each file as a chunk of its own, after the text).
 * nodemailer opens its own socket (not the net module's fetch): it goes only to the configured smtp_host.
 */
import nodemailer from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser';
import type { ChannelConnection, ChannelKit, OutboundChunk } from '@talon/channels';
import type { EmailSettings } from '../config.ts';
import { channelError } from './errors.ts';
import type { ReplyContext } from './parse.ts';

export type ContextLookup = (messageId: string) => Promise<ReplyContext | undefined>;

/** The chat is the correspondent's address: exactly one, or the send is refused (never a list smuggled in a chat id). */
function recipient(chatId: string): string {
  const parsed = addressparser(chatId, { flatten: true });
  const only = parsed.length === 1 ? parsed[0]!.address : undefined;
  if (!only || !/^[^\s@]+@[^\s@]+$/.test(only)) throw channelError('permanent', `chat '${chatId}' is not one email address`);
  return only;
}

const replySubject = (subject: string) => (/^re:/i.test(subject.trim()) ? subject.trim() : `Re: ${subject.trim()}`.trimEnd());
/** A mail that starts a conversation is titled by its first line, a file alone by the file's name. */
const firstLine = (text: string, file?: string) =>
  (text.split('\n').find((l) => l.trim()) ?? '').trim().slice(0, 78) || file?.replace(/\s+/g, ' ').slice(0, 78) || 'Message';

/** Maps nodemailer's failures to the channels module's kinds: a refused login stops, 5xx fails the row, the rest retries. */
function smtpFailure(err: unknown): Error {
  const e = err as { code?: unknown; responseCode?: unknown; message?: unknown };
  const message = `SMTP: ${typeof e.message === 'string' ? e.message : String(err)}`;
  if (e.code === 'EAUTH') return channelError('auth', message);
  if (typeof e.responseCode === 'number') return channelError(e.responseCode >= 500 ? 'permanent' : 'transient', message);
  if (e.code === 'EENVELOPE' || e.code === 'EMESSAGE') return channelError('permanent', message);
  return channelError('transient', message);
}

export function createOutbox(settings: EmailSettings, kit: ChannelKit, lookup: ContextLookup): Pick<ChannelConnection, 'send'> & { close(): void } {
  const implicit = settings.smtpPort === 465;
  const transport = nodemailer.createTransport({
    host: settings.smtpHost,
    port: settings.smtpPort,
    secure: settings.tls && implicit,
    // With tls, the login never crosses in the clear: STARTTLS is required where TLS is not implicit.
    requireTLS: settings.tls && !implicit,
    auth: { user: settings.username, pass: settings.password },
    connectionTimeout: 30_000,
    socketTimeout: 60_000,
  });
  return {
    async send(chunk: OutboundChunk) {
      const to = recipient(chunk.chatId);
      const parent = chunk.replyTo ?? chunk.threadId;
      let context: ReplyContext | undefined;
      try {
        context = parent ? await lookup(parent) : undefined;
      } catch (err) {
        throw channelError('transient', `IMAP lookup of ${parent}: ${(err as Error).message}`);
      }
      const references = parent ? [...new Set([...(context?.references ?? (chunk.threadId ? [chunk.threadId] : [])), parent])] : [];
      const text = kit.toPlainText(chunk.text);
      const file = chunk.media?.data !== undefined ? chunk.media : undefined;
      try {
        const info = await transport.sendMail({
          from: settings.from,
          to,
          subject: context ? replySubject(context.subject) : parent ? 'Re: your message' : firstLine(text, file?.name),
          text,
          html: `<div style="white-space: pre-wrap">${kit.toTelegramHtml(chunk.text)}</div>`,
          ...(parent ? { inReplyTo: parent, references } : {}),
          ...(file ? { attachments: [{ filename: file.name, contentType: file.mediaType, content: Buffer.from(file.data!, 'base64') }] } : {}),
          // RFC 3834: marks the mail as automatic, so vacation responders do not answer it (no reply loop).
          headers: { 'Auto-Submitted': parent ? 'auto-replied' : 'auto-generated' },
        });
        return { messageId: info.messageId };
      } catch (err) {
        throw smtpFailure(err);
      }
    },
    close: () => transport.close(),
  };
}

/**
 * One raw mail → the InboundMessage the journal takes. Parsing is mailparser's: MIME, encodings and charsets, and an
 * HTML-only mail reduced to text by its html-to-text (a real HTML parser; scripts, styles and markup never reach the
 * agent, links stay as text). The mail is untrusted: the agent sees its text, never its HTML.
 */
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import type { InboundMedia, InboundMessage } from '@talon/channels';

/** One attachment above this arrives as a note (name and type) rather than its content. */
export const ATTACHMENT_CAP_BYTES = 10 * 1024 * 1024;
/** Bytes of one mail read at most (a common provider's own limit); the rest of a larger mail is not read. */
export const MAIL_CAP_BYTES = 25 * 1024 * 1024;

/** What a reply needs to thread under the mail it answers. */
export interface ReplyContext {
  subject: string;
  /** The mail's own References (oldest first), without its Message-ID. */
  references: string[];
}

export type ParseOutcome = { kind: 'message'; message: InboundMessage; context: ReplyContext } | { kind: 'skip'; reason: string; platformId: string };

export interface ParseOptions {
  /** The id used when the mail has no Message-ID: stable for this mailbox (UIDVALIDITY and UID). */
  fallbackId: string;
  /** The mail was larger than MAIL_CAP_BYTES and only its start was read. */
  truncated: boolean;
  /** Our own addresses: mail from them is never answered (a copy of a reply must not start a loop). */
  own: readonly string[];
}

const list = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : value.split(/\s+/)).filter(Boolean);
const firstAddress = (from: AddressObject | undefined) => from?.value.find((a) => a.address);
const header = (mail: ParsedMail, name: string) => {
  const value = mail.headers.get(name);
  return typeof value === 'string' ? value.trim().toLowerCase() : '';
};

/**
 * RFC 3834: automatic mail (vacation replies, bounces, list traffic) is never answered, or two robots reply to each
 * other for ever.
 */
function automatic(mail: ParsedMail): string | undefined {
  const auto = header(mail, 'auto-submitted');
  if (auto && auto !== 'no') return `Auto-Submitted: ${auto}`;
  const precedence = header(mail, 'precedence');
  if (['bulk', 'junk', 'list', 'auto_reply'].includes(precedence)) return `Precedence: ${precedence}`;
  if (mail.headers.has('x-autoreply') || mail.headers.has('x-autorespond')) return 'an auto-reply header';
  const type = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  if (type?.value === 'multipart/report') return 'a delivery report';
  return undefined;
}

function media(mail: ParsedMail): InboundMedia[] {
  // Inline parts of an HTML body (logos, signature images) are not what the sender attached.
  return mail.attachments
    .filter((a) => !a.related)
    .map((a) => ({
      mediaType: a.contentType || 'application/octet-stream',
      ...(a.filename ? { name: a.filename } : {}),
      ...(a.size <= ATTACHMENT_CAP_BYTES ? { data: a.content.toString('base64') } : {}),
    }));
}

/**
 * mailparser writes text for an HTML part only when it is the whole mail or sits beside a text part: an HTML body
 * next to attachments (multipart/mixed) gets none. Such a body is parsed again as a mail of its own, so the same
 * converter (html-to-text, with mailparser's size and nesting limits) reads it.
 */
async function htmlText(mail: ParsedMail): Promise<{ text: string; failed: boolean }> {
  const text = (mail.text ?? '').trim();
  if (text || !mail.html) return { text, failed: Boolean(mail.html && mail.textConversionError) };
  const alone = await simpleParser(Buffer.from(`Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${mail.html}`), {
    skipTextToHtml: true,
  });
  return { text: (alone.text ?? '').trim(), failed: Boolean(alone.textConversionError) };
}

async function body(mail: ParsedMail, files: InboundMedia[], truncated: boolean): Promise<string> {
  const parts = [`Subject: ${mail.subject ?? ''}`.trimEnd()];
  const { text, failed } = await htmlText(mail);
  if (text) parts.push(text);
  else if (failed) parts.push('[this HTML mail could not be read as text]');
  const skipped = files.filter((f) => f.data === undefined);
  if (skipped.length)
    parts.push(`[attachments over ${ATTACHMENT_CAP_BYTES / 1024 / 1024} MB not downloaded: ${skipped.map((f) => f.name ?? f.mediaType).join(', ')}]`);
  if (truncated) parts.push(`[the mail is larger than ${MAIL_CAP_BYTES / 1024 / 1024} MB; only its start was read]`);
  return parts.join('\n\n');
}

export async function parseMail(source: Buffer, options: ParseOptions): Promise<ParseOutcome> {
  const mail = await simpleParser(source, { skipTextToHtml: true, skipImageLinks: true });
  const platformId = mail.messageId ?? options.fallbackId;
  const sender = firstAddress(mail.from);
  const address = sender?.address?.toLowerCase();
  if (!address) return { kind: 'skip', reason: 'no sender address', platformId };
  if (options.own.includes(address)) return { kind: 'skip', reason: 'sent by this mailbox', platformId };
  const auto = automatic(mail);
  if (auto) return { kind: 'skip', reason: `automatic mail (${auto})`, platformId };
  const references = list(mail.references);
  const inReplyTo = list(mail.inReplyTo)[0];
  if (inReplyTo && !references.includes(inReplyTo)) references.push(inReplyTo);
  const files = media(mail);
  const message: InboundMessage = {
    platformId,
    chatId: address,
    // The thread is the conversation's first mail: References lists it first, and a new mail starts its own.
    threadId: references[0] ?? platformId,
    senderId: address,
    ...(sender?.name ? { senderName: sender.name } : {}),
    text: await body(mail, files, options.truncated),
    isGroup: false,
    ...(files.length ? { media: files } : {}),
    ...(mail.date ? { sentAt: mail.date.toISOString() } : {}),
  };
  return { kind: 'message', message, context: { subject: mail.subject ?? '', references } };
}

/** The subject and References of a mail's header block (a reply looked up on the server after a restart). */
export async function parseReplyContext(headers: Buffer): Promise<ReplyContext> {
  const mail = await simpleParser(headers, { skipTextToHtml: true, skipHtmlToText: true });
  const references = list(mail.references);
  const inReplyTo = list(mail.inReplyTo)[0];
  if (inReplyTo && !references.includes(inReplyTo)) references.push(inReplyTo);
  return { subject: mail.subject ?? '', references };
}

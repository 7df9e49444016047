/**
 * The shared channel conformance suite for the email adapter, against Debian's dovecot (IMAP) and the SMTP sink. DM `n`
 * is mail from user<n>@example.test delivered into the bot's INBOX, every mail of one DM in one conversation (its
 * References name the DM's first Message-ID), so its turns share a session and answer in order; a thread is another
 * conversation root. What the platform received is the mail at the SMTP sink to that sender (files: its mails'
 * attachments); a file sent in is a mail with an attachment (nodemailer's composer). The server drops the
 * connection by ending the IMAP session process; a wrong password is the bad credentials.
 */
import { describe } from 'node:test';
import { simpleParser } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import { channelConformance, imapServerMissing, startImapServer, startSmtpSink } from '@talon/testing';
import { BOT, mail, PASSWORD } from './helpers.ts';

const sender = (n: number) => `user${n}@example.test`;
const dmRoot = (n: number) => `<dm-${n}@example.test>`;
let mailSequence = 0;

const missing = imapServerMissing();
if (missing) describe('channel-email: channel conformance', { skip: missing }, () => undefined);
else
  channelConformance({
    name: 'channel-email',
    channel: 'email',
    only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'channels', 'channel-email'],
    limits: { maxLength: 100_000, unit: 'chars' },
    async harness() {
      const imap = await startImapServer({ users: { [BOT]: PASSWORD } });
      const smtp = await startSmtpSink({ users: { [BOT]: PASSWORD } });
      const started = new Set<number>();
      /** The DM's first mail is its conversation's root; later ones refer to it (or to `thread`). */
      const place = (n: number, thread?: string) => {
        const root = thread ?? dmRoot(n);
        const first = !thread && !started.has(n);
        started.add(n);
        return { root, first, id: first ? root : `<m${++mailSequence}.${n}@example.test>` };
      };
      /** A mail from user<n>. */
      const deliver = (n: number, text: string, thread?: string) => {
        const { root, first, id } = place(n, thread);
        imap.deliver(
          BOT,
          mail({ id, from: sender(n), subject: `Conversation ${n}`, body: text, headers: first ? {} : { 'In-Reply-To': root, References: root } }),
        );
      };
      const sentTo = (n: number) => Promise.all(smtp.messages.filter((m) => m.to.includes(sender(n))).map((m) => simpleParser(m.raw)));
      return {
        configure: {
          token: PASSWORD,
          imap_host: imap.host,
          imap_port: imap.port,
          smtp_host: smtp.host,
          smtp_port: smtp.port,
          username: BOT,
          tls: false,
        },
        badCredentials: { token: 'not-the-imap-password' },
        noGroups: 'email has no group chats: every mail is a direct conversation',
        dm: (n, text, options) => deliver(n, text, options?.thread),
        group() {
          throw new Error('email has no groups');
        },
        async dmMedia(n, file, text) {
          const { root, first, id } = place(n);
          const raw = await new MailComposer({
            from: sender(n),
            to: BOT,
            subject: `Conversation ${n}`,
            messageId: id,
            ...(first ? {} : { inReplyTo: root, references: root }),
            text,
            attachments: [{ filename: file.name ?? 'file', contentType: file.mediaType, content: file.data }],
          })
            .compile()
            .build();
          imap.deliver(BOT, raw);
        },
        dmChat: sender,
        receivedMedia: async ({ dm }) =>
          (await sentTo(dm)).flatMap((m) =>
            m.attachments.map((a) => ({ ...(a.filename ? { name: a.filename } : {}), mediaType: a.contentType, data: a.content })),
          ),
        async received(target) {
          if (!('dm' in target)) return [];
          const mails = await sentTo(target.dm);
          return mails.filter((m) => !target.thread || [m.references].flat().includes(target.thread)).map((m) => (m.text ?? '').trim());
        },
        thread: (n) => `<thread-${n}@example.test>`,
        // Returns once the session ended: the mail delivered next waits in the INBOX for the adapter's new session.
        dropConnection() {
          if (!imap.dropSessions()) throw new Error('no IMAP session to drop');
        },
        async stop() {
          await smtp.stop();
          await imap.stop();
        },
      };
    },
  });

/** The email ChannelAdapter: an Inbox (IMAP) for what comes in, an outbox (SMTP) for replies. */
import type { ChannelAdapter, ChannelKit } from '@talon/channels';
import { emailFields, emailSettings } from '../config.ts';
import { channelError } from './errors.ts';
import { Inbox, type InboxOptions } from './inbox.ts';
import { createOutbox } from './outbox.ts';

export function emailAdapter(kit: ChannelKit, options: InboxOptions = {}): ChannelAdapter {
  return {
    name: 'email',
    description: 'Email: new mail in an IMAP INBOX (IDLE) in, SMTP replies threaded by In-Reply-To/References out',
    fields: emailFields,
    secretFields: [],
    urlFields: [],
    // threads: References; media: attachments in (up to 10 MB each) and out; no typing or edits in mail.
    capabilities: { threads: true, media: true, typing: false, edits: false, qr: false, platformDedup: false },
    // A reply is one mail: the cap only bounds a runaway answer. Markdown comes in; the outbox renders text and HTML.
    limits: { maxLength: 100_000, unit: 'chars', format: 'markdown' },
    async start(ctx) {
      const settings = emailSettings(ctx.config, ctx.secrets);
      if (!settings.password) throw channelError('auth', 'no password: set the channel token');
      const inbox = new Inbox(settings, ctx, kit, options);
      const outbox = createOutbox(settings, kit, (id) => inbox.replyContext(id));
      ctx.report('connecting');
      const running = inbox.run();
      return {
        send: (chunk) => outbox.send(chunk),
        async stop() {
          outbox.close();
          await running;
        },
      };
    },
  };
}

// Attachments of a mail in: their content up to the cap, a larger one named for the agent without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import MailComposer from 'nodemailer/lib/mail-composer';
import { ATTACHMENT_CAP_BYTES, parseMail } from '../services/parse.ts';

test('an attachment up to 10 MB comes with its content; a larger one is a note with its name', async () => {
  const raw = await new MailComposer({
    from: 'alice@example.test',
    to: 'bot@talon.test',
    subject: 'files',
    text: 'two files',
    attachments: [
      { filename: 'small.png', contentType: 'image/png', content: Buffer.from('png bytes') },
      { filename: 'huge.bin', contentType: 'application/octet-stream', content: Buffer.alloc(ATTACHMENT_CAP_BYTES + 1) },
    ],
  })
    .compile()
    .build();
  const parsed = await parseMail(raw, { fallbackId: 'imap:1:1', truncated: false, own: [] });
  assert.equal(parsed.kind, 'message');
  if (parsed.kind !== 'message') return;
  assert.deepEqual(parsed.message.media, [
    { mediaType: 'image/png', name: 'small.png', data: Buffer.from('png bytes').toString('base64') },
    { mediaType: 'application/octet-stream', name: 'huge.bin' },
  ]);
  assert.match(parsed.message.text, /not downloaded: huge\.bin/);
});

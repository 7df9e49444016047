import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { imapServerMissing, startImapServer, startSmtpSink, type AgentTestKernel, type ImapServer, type SmtpSink } from '@talon/testing';
import { BOT, channel, configure, mail, seen, sentMail, startEmailKernel, until, userTexts, withMailbox } from './helpers.ts';

const missing = imapServerMissing();
let k: AgentTestKernel;
let imap: ImapServer;
let smtp: SmtpSink;

before(async () => {
  if (missing) return;
  imap = await startImapServer({ users: { [BOT]: 'imap-test-password' } });
  smtp = await startSmtpSink({ users: { [BOT]: 'imap-test-password' } });
  k = await startEmailKernel();
  await k.spawnAgent('helper');
  const res = await configure(k, imap, smtp);
  assert.equal(res.status, 200, await res.clone().text());
  await until(async () => (await channel(k)).state === 'connected', 'the email channel connected');
});
after(async () => {
  await k?.stop();
  await smtp?.stop();
  await imap?.stop();
});

const requests = () => k.fake.requests.length;

test('a mail in → an agent turn → a threaded reply over SMTP, the mail \\Seen after the commit', { skip: missing }, async () => {
  k.fake.enqueue({ text: 'Hello **Alice**, noon works. <script>alert(1)</script> [x](javascript:alert(1))' });
  imap.deliver(BOT, mail({ id: '<m1@example.test>', body: 'Shall we have lunch at noon?' }));
  const [reply] = await sentMail(smtp, 1);
  assert.equal(reply!.subject, 'Re: Lunch?');
  assert.equal(reply!.inReplyTo, '<m1@example.test>');
  assert.deepEqual([reply!.references].flat(), ['<m1@example.test>']);
  assert.equal(reply!.from?.value[0]?.address, BOT);
  assert.deepEqual(smtp.messages[0]!.to, ['alice@example.test']);
  assert.equal(smtp.messages[0]!.user, BOT);
  assert.equal(reply!.headers.get('auto-submitted'), 'auto-replied');
  // Plain text by the kit's formatter: no Markdown markers, raw HTML as visible text, the script link without its URL.
  assert.match(reply!.text ?? '', /Hello Alice, noon works\./);
  assert.doesNotMatch(reply!.text ?? '', /\*\*|javascript:/);
  // The HTML alternative: formatting kept, the model's HTML escaped, no script link.
  const html = String(reply!.html);
  assert.match(html, /<b>Alice<\/b>/);
  assert.match(html, /&lt;script&gt;/);
  assert.doesNotMatch(html, /<script|javascript:/);
  // The agent saw the subject and the body (untrusted text, as text).
  assert.ok(userTexts(k).some((t) => t.includes('Subject: Lunch?') && t.includes('Shall we have lunch at noon?')));
  await until(async () => (await seen(imap)).get('<m1@example.test>') === true, 'm1 flagged \\Seen');
});

test('a reply in the thread answers with the whole References chain', { skip: missing }, async () => {
  const ourId = smtp.messages.length ? (await sentMail(smtp, 1))[0]!.messageId! : '';
  k.fake.enqueue({ text: 'See you there.' });
  imap.deliver(
    BOT,
    mail({
      id: '<m2@example.test>',
      subject: 'Re: Lunch?',
      body: 'Great, see you.',
      headers: { 'In-Reply-To': ourId, References: `<m1@example.test> ${ourId}` },
    }),
  );
  const replies = await sentMail(smtp, 2);
  const second = replies[1]!;
  assert.equal(second.subject, 'Re: Lunch?');
  assert.equal(second.inReplyTo, '<m2@example.test>');
  assert.deepEqual([second.references].flat(), ['<m1@example.test>', ourId, '<m2@example.test>']);
  // One session per thread: the second turn was asked with the first exchange in its history.
  const last = k.fake.requests.at(-1)!;
  assert.match(JSON.stringify(last.body.messages), /Shall we have lunch at noon\?/);
});

test('a second mail with a Message-ID already taken is not ingested again (and is flagged \\Seen)', { skip: missing }, async () => {
  const before = requests();
  imap.deliver(BOT, mail({ id: '<m1@example.test>', subject: 'Lunch? (resent)', body: 'resent copy' }));
  await until(async () => [...(await seen(imap)).values()].every(Boolean), 'every mail flagged \\Seen');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(requests(), before, 'no agent turn for the duplicate');
  assert.equal(smtp.messages.length, 2);
  assert.ok(!userTexts(k).some((t) => t.includes('resent copy')));
});

test('a crash between the commit and \\Seen delivers the mail again as a duplicate: no second turn, no second reply', { skip: missing }, async () => {
  const before = requests();
  // The state a crash after emit resolved and before the STORE leaves: committed, still unseen on the server.
  await withMailbox(imap, (client) => client.messageFlagsRemove({ header: { 'message-id': '<m2@example.test>' } }, ['\\Seen']));
  assert.equal((await seen(imap)).get('<m2@example.test>'), false);
  // A restarted adapter (a fresh IMAP session) reads the INBOX again.
  const res = await k.request('/api/channels/reload', { method: 'POST', json: {} });
  assert.ok(res.status < 300, `reload: ${res.status}`);
  await until(async () => (await seen(imap)).get('<m2@example.test>') === true, 'm2 flagged \\Seen again');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(requests(), before);
  assert.equal(smtp.messages.length, 2);
});

test('automatic mail (a vacation reply) and mail from the bot itself are never answered', { skip: missing }, async () => {
  const before = requests();
  imap.deliver(BOT, mail({ id: '<auto@example.test>', subject: 'Out of office', headers: { 'Auto-Submitted': 'auto-replied' } }));
  imap.deliver(BOT, mail({ id: '<self@talon.test>', from: BOT, subject: 'Re: Lunch?' }));
  await until(async () => {
    const flags = await seen(imap);
    return flags.get('<auto@example.test>') === true && flags.get('<self@talon.test>') === true;
  }, 'both flagged \\Seen');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(requests(), before);
  assert.equal(smtp.messages.length, 2);
});

test('an HTML mail reaches the agent as text, its script and markup dropped; an attachment comes along', { skip: missing }, async () => {
  k.fake.enqueue({ text: 'Got it.' });
  const boundary = 'b-123';
  imap.deliver(
    BOT,
    mail({
      id: '<html1@example.test>',
      subject: 'Report',
      contentType: `multipart/mixed; boundary="${boundary}"`,
      body: [
        `--${boundary}`,
        'Content-Type: text/html; charset=utf-8',
        '',
        '<html><head><style>p{color:red}</style><script>steal()</script></head><body><p>Quarterly <b>numbers</b> attached.</p><img src="https://tracker.example/p.gif"></body></html>',
        `--${boundary}`,
        'Content-Type: text/csv; name="q3.csv"',
        'Content-Disposition: attachment; filename="q3.csv"',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('quarter,revenue\nq3,42\n').toString('base64'),
        `--${boundary}--`,
      ].join('\n'),
    }),
  );
  await sentMail(smtp, 3);
  const asked = userTexts(k).find((t) => t.includes('Subject: Report'));
  assert.ok(asked, 'the agent was asked');
  assert.match(asked, /Quarterly numbers attached\./);
  assert.doesNotMatch(asked, /steal\(\)|<p>|<b>|color:red/);
  assert.match(asked, /q3\.csv/);
});

test('the server dropping the connection: the adapter reconnects, and mail from meanwhile is answered once', { skip: missing }, async () => {
  const before = requests();
  const sent = smtp.messages.length;
  assert.ok(imap.dropSessions() > 0, 'an imap session ended');
  k.fake.enqueue({ text: 'Back again.' });
  imap.deliver(BOT, mail({ id: '<after-drop@example.test>', subject: 'Still there?' }));
  const replies = await sentMail(smtp, sent + 1);
  assert.equal(replies.at(-1)!.inReplyTo, '<after-drop@example.test>');
  await until(async () => (await seen(imap)).get('<after-drop@example.test>') === true, 'flagged \\Seen');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(requests(), before + 1);
  assert.equal(smtp.messages.length, sent + 1);
  assert.equal((await channel(k)).state, 'connected');
});

test('a file sent out is an attachment of its own mail, titled by its name when it starts the conversation', { skip: missing }, async () => {
  const channels = k.kernel.services.view<{ send(m: object): Promise<{ messageIds: string[] }> }>('channels.service');
  const before = smtp.messages.length;
  await channels.send({
    channel: 'email',
    chatId: 'carol@example.test',
    text: '',
    media: [{ mediaType: 'text/csv', name: 'q4.csv', data: Buffer.from('q4,43\n').toString('base64') }],
  });
  const sent = (await sentMail(smtp, before + 1)).at(-1)!;
  assert.equal(sent.subject, 'q4.csv');
  assert.deepEqual(
    sent.attachments.map((a) => [a.filename, a.contentType, a.content.toString()]),
    [['q4.csv', 'text/csv', 'q4,43\n']],
  );
});

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { imapServerMissing, startImapServer, startSmtpSink, type AgentTestKernel, type ImapServer, type SmtpSink } from '@talon/testing';
import { BOT, channel, configure, startEmailKernel, until } from './helpers.ts';

const missing = imapServerMissing();
let k: AgentTestKernel | undefined;
let imap: ImapServer | undefined;
let smtp: SmtpSink | undefined;
after(async () => {
  await k?.stop();
  await smtp?.stop();
  await imap?.stop();
});

// A server of its own: after a refused login dovecot delays the next one from the same address by about 3.5 s.
test('a wrong password stops the channel in state error with last_error, and it does not retry', { skip: missing }, async () => {
  imap = await startImapServer({ users: { [BOT]: 'the-right-password' } });
  smtp = await startSmtpSink();
  k = await startEmailKernel();
  await k.spawnAgent('helper');
  const res = await configure(k, imap, smtp, { token: 'a-wrong-password' });
  assert.equal(res.status, 200);
  assert.doesNotMatch(await res.text(), /a-wrong-password/);
  await until(async () => (await channel(k!)).state === 'error', 'state error');
  const first = await channel(k);
  assert.match(first.last_error ?? '', /IMAP login refused/);
  assert.doesNotMatch(first.last_error ?? '', /a-wrong-password/);
  // Stopped for good: still in error after the first backoff would have retried.
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await channel(k)).state, 'error');
});

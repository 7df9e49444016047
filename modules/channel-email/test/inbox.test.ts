/**
 * The acknowledgement order on the real server: a mail is flagged \Seen only after emit resolved. The adapter runs
 * here without a kernel, with a context whose emit the test holds, so the moment between the two is observable.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { imapServerMissing, startImapServer, waitFor, type ImapServer } from '@talon/testing';
import type { AdapterContext, ChannelKit, EmitResult, InboundMessage } from '@talon/channels';
import { emailSettings } from '../config.ts';
import { Inbox } from '../services/inbox.ts';
import { BOT, PASSWORD, mail, seen } from './helpers.ts';

const missing = imapServerMissing();
let imap: ImapServer;
before(async () => {
  if (!missing) imap = await startImapServer({ users: { [BOT]: PASSWORD } });
});
after(() => imap?.stop());

/**
 * The kit's reconnect loop reduced to one connection (the kit is the channels module's service, which a test without
 * a kernel does not have); the loop itself is tested in the channels module.
 */
const oneConnection = {
  Reconnector: class {
    constructor(private readonly o: { connect(link: object): Promise<void>; teardown(): void; signal: AbortSignal }) {}
    async run() {
      await this.o.connect({ ready() {}, traffic() {}, signal: this.o.signal }).catch(() => undefined);
      this.o.teardown();
      return { state: 'aborted' };
    }
  },
} as unknown as ChannelKit;

test('a mail is flagged \\Seen only after emit resolves; a failed commit leaves it unseen for the next read', { skip: missing }, async () => {
  const controller = new AbortController();
  const calls: Array<{ message: InboundMessage; settle: (ok: boolean) => void }> = [];
  const ctx: AdapterContext = {
    channel: 'email',
    config: { imap_host: imap.host, imap_port: imap.port, smtp_host: '127.0.0.1', username: BOT, tls: false },
    secrets: { token: PASSWORD },
    emit: (message) =>
      new Promise<EmitResult>((resolve, reject) =>
        calls.push({ message, settle: (ok) => (ok ? resolve({ duplicate: false }) : reject(new Error('commit failed'))) }),
      ),
    report: () => undefined,
    fetch: () => Promise.reject(new Error('no fetch')),
    allowOrigins: [],
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    signal: controller.signal,
  };
  const inbox = new Inbox(emailSettings(ctx.config, ctx.secrets), ctx, oneConnection, { pollMs: 200 });
  const running = inbox.run();
  try {
    imap.deliver(BOT, mail({ id: '<gate@example.test>' }));
    await waitFor(() => calls.length === 1, 10_000, 'the mail emitted');
    assert.equal(calls[0]!.message.platformId, '<gate@example.test>');
    // Emitted, not yet committed: still unseen.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await seen(imap)).get('<gate@example.test>'), false);
    // The commit fails: unseen, and the next poll hands it over again.
    calls[0]!.settle(false);
    await waitFor(() => calls.length === 2, 10_000, 'the mail emitted again');
    assert.equal((await seen(imap)).get('<gate@example.test>'), false);
    calls[1]!.settle(true);
    await waitFor(async () => (await seen(imap)).get('<gate@example.test>') === true, 10_000, 'flagged \\Seen after the commit');
  } finally {
    controller.abort();
    await running;
  }
});

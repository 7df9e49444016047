// The WhatsApp Web account survives restarts: a kernel started again on the same home connects without a QR code, its
// Signal keys still there; when the stored credentials cannot be opened, their backup (written when a connection
// opened) signs in and the main row is written again from it; with neither, the channel asks for a sign-in.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openKernelStore, type AgentTestKernel } from '@talon/testing';
import { userJid } from './fixtures/whatsapp-fake-socket/fake-socket.ts';
import { configureWeb, fakeOf, signIn, startWebKernel, until, untilState } from './web-helpers.ts';

let k: AgentTestKernel | undefined;
let home: string | undefined;
after(() => k?.stop());

/**
 * Stops the running kernel (keeping its home) and starts another on it; `downtime` runs on the stopped kernel's
 * database, so nothing the running adapter still writes (a backup after a connection opened) can undo it.
 */
async function restart(downtime?: string): Promise<AgentTestKernel> {
  await k?.stop();
  if (downtime) {
    const db = await openKernelStore(k!);
    await db.store.run(downtime);
    await db.close();
  }
  k = await startWebKernel({ home: home!, keepHome: true });
  return k;
}

const creds = async (kernel: AgentTestKernel) =>
  kernel.kernel.store.one<{ value: string; updated_at: number }>(
    "SELECT value, updated_at FROM channel_whatsapp_auth WHERE channel = 'whatsapp' AND key = 'creds'",
  );

test('after a restart the channel connects on the stored account: no QR code, the keys still there', async () => {
  k = await startWebKernel({ keepHome: true });
  home = k.home;
  await k.spawnAgent('helper');
  await configureWeb(k);
  await signIn(k);

  const again = await restart();
  await untilState(again, 'connected');
  const fake = fakeOf(again);
  assert.deepEqual(
    fake.summary().map((s) => ({ qrShown: s.qrShown, paired: s.paired })),
    [{ qrShown: 0, paired: true }],
    'one socket, on the stored account',
  );
  assert.deepEqual(fake.preKeyFound, [true], 'the Signal keys survived');
  again.fake.enqueue({ text: 'still here' });
  fake.inject({ chat: userJid(1), text: 'after the restart' });
  await until(() => (fake.textsTo(userJid(1)).length ? true : undefined), 'the reply');
});

test('credentials that cannot be opened: the backup signs in, and the main row is written again', async () => {
  const again = await restart("UPDATE channel_whatsapp_auth SET value = 'v1:not-a-sealed-value' WHERE channel = 'whatsapp' AND key = 'creds'");
  await untilState(again, 'connected');
  assert.deepEqual(
    fakeOf(again)
      .summary()
      .map((s) => s.qrShown),
    [0],
  );
  const row = await creds(again);
  assert.ok(row && row.value !== 'v1:not-a-sealed-value', 'the main row is whole again');
});

test('neither the credentials nor their backup readable: the channel asks for a sign-in', async () => {
  const again = await restart("UPDATE channel_whatsapp_auth SET value = 'broken' WHERE channel = 'whatsapp' AND key IN ('creds', 'creds.backup')");
  const c = await untilState(again, 'error');
  assert.match(c.last_error!, /not signed in/);
  // It stays so: no socket is ever made without credentials.
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(fakeOf(again).sockets.length, 0);
  assert.match((await untilState(again, 'error')).last_error!, /not signed in/);
});

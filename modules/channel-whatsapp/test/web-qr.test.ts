// WhatsApp Web's QR sign-in through the routes, Baileys played by the fake socket: pending with the code as text and
// PNG, the code rotating (status and an idempotent start follow it), scanned on the pairing, authenticated once the
// socket made again after 515 opens (the account stored, sealed, with its backup and keys; the channel connects);
// expired when the last code lapses or WhatsApp's codes run out (408); failed on 401; refused in cloud mode. A
// sign-in that ends without a scan leaves the stored account and the running channel alone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentTestKernel } from '@talon/testing';
import type { FakeWhatsApp } from './fixtures/whatsapp-fake-socket/fake-socket.ts';
import { call, channel, configureWeb, fakeOf, qrStart, qrStatus, startWebKernel, until, untilState } from './web-helpers.ts';

let k: AgentTestKernel;
let fake: FakeWhatsApp;

before(async () => {
  k = await startWebKernel();
  fake = fakeOf(k);
});
after(() => k?.stop());

const authRows = async () =>
  k.kernel.store.many<{ key: string; value: string; updated_at: number }>(
    "SELECT key, value, updated_at FROM channel_whatsapp_auth WHERE channel = 'whatsapp' ORDER BY key",
  );
const assertPending = async (code: string) => {
  const res = await qrStatus(k);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.status, 'pending');
  assert.equal(res.body.qr_code, code);
  assert.match(res.body.qr_data_url, /^data:image\/png;base64,/);
  assert.ok(Date.parse(res.body.expires_at) > Date.now());
  return res.body as { qr_code: string; expires_at: string };
};

test('in cloud mode (and before any configuration) a QR sign-in is a 400 naming the mode', async () => {
  const res = await qrStart(k);
  assert.equal(res.status, 400);
  assert.match(res.body.error, /mode "cloud".*configure mode "web"/);
  assert.equal(fake.sockets.length, 0, 'no socket was made');
});

test('a web channel not signed in is in error, saying how to sign in', async () => {
  await configureWeb(k);
  const c = await untilState(k, 'error');
  assert.match(c.last_error!, /not signed in: start the QR sign-in/);
});

test('the QR walk: pending, the code rotates, scanned, then authenticated; the channel connects on the stored account', async () => {
  fake.setAutoOpen(false);
  const started = await qrStart(k);
  assert.equal(started.status, 200, JSON.stringify(started.body));
  assert.equal(started.body.status, 'pending');
  assert.match(started.body.qr_code, /^2@fake-ref-1-1,/);
  const first = await assertPending(started.body.qr_code);

  await sleep(20); // a later expiry, to the millisecond
  fake.rotate();
  const rotated = await until(async () => {
    const s = await qrStatus(k);
    return s.body.qr_code !== first.qr_code ? s.body : undefined;
  }, 'the next code');
  assert.match(rotated.qr_code, /^2@fake-ref-1-2,/);
  assert.ok(Date.parse(rotated.expires_at) > Date.parse(first.expires_at), 'the expiry follows the new code');
  const again = await qrStart(k);
  assert.equal(again.body.qr_code, rotated.qr_code, 'a second start answers the code shown now');
  assert.equal(fake.sockets.length, 1, 'and makes no new socket');

  fake.scan();
  await until(async () => ((await qrStatus(k)).body.status === 'scanned' ? true : undefined), 'scanned');
  // WhatsApp closed with 515 after the pairing: the sign-in made its socket again at once (held unopened here).
  await until(() => (fake.sockets.length === 2 ? true : undefined), 'the socket made again after 515');
  assert.deepEqual(await qrStatus(k), { status: 200, body: { status: 'scanned' } });
  assert.deepEqual(await authRows(), [], 'nothing stored before the connection opened');

  fake.setAutoOpen(true);
  fake.openWaiting();
  await until(async () => ((await qrStatus(k)).body.status === 'authenticated' ? true : undefined), 'authenticated');
  const rows = await authRows();
  assert.deepEqual(
    rows.map((r) => r.key),
    ['creds', 'creds.backup', 'key:pre-key:1'],
  );
  for (const r of rows) assert.match(r.value, /^v1:[A-Za-z0-9+/]+=*$/, `${r.key} is sealed by the vault`);
  assert.ok(fake.sockets[1]!.ended, 'the sign-in closed its socket: the channel connects with its own');

  const c = await untilState(k, 'connected');
  assert.equal(c.last_error, null);
  assert.equal(fake.sockets.length, 3);
  assert.deepEqual(fake.preKeyFound, [false, true], "the channel's socket found the key the sign-in made");
});

test('a code nobody scans before it expires, with no next one, is expired; the stored account and the channel stay', async () => {
  // The channel's own writes on its open (creds, backup) settle first: only the sign-in's are looked for here.
  await sleep(300);
  const before = await authRows();
  fake.setQrTtl(300);
  try {
    const started = await qrStart(k);
    assert.equal(started.body.status, 'pending');
    assert.ok(Date.parse(started.body.expires_at) - Date.now() <= 300);
    const res = await until(async () => {
      const s = await qrStatus(k);
      return s.status === 410 ? s : undefined;
    }, 'expired');
    assert.equal(res.body.status, 'expired');
    assert.match(res.body.error, /expired: no phone scanned the code/);
    assert.ok(fake.sockets.at(-1)!.ended, 'its socket closed');
  } finally {
    fake.setQrTtl(60_000);
  }
  assert.deepEqual(await authRows(), before, 'the stored account is untouched');
  assert.equal((await channel(k)).state, 'connected');
});

test("WhatsApp's codes running out (408 before a scan) is expired", async () => {
  assert.equal((await qrStart(k)).body.status, 'pending');
  fake.exhaust();
  const res = await until(async () => {
    const s = await qrStatus(k);
    return s.status === 410 ? s : undefined;
  }, 'expired');
  assert.equal(res.body.status, 'expired');
});

test('a sign-in closed with 401 is failed: logged out', async () => {
  const started = await qrStart(k);
  assert.equal(started.body.status, 'pending');
  fake.endCurrent(401);
  const res = await until(async () => {
    const s = await qrStatus(k);
    return s.status === 410 ? s : undefined;
  }, 'failed');
  assert.equal(res.body.status, 'failed');
  assert.match(res.body.error, /failed: logged out/);
  const sockets = fake.sockets.length;
  assert.equal((await call(k, 'POST', '/api/channels/whatsapp/qr/start')).body.status, 'pending', 'a new start is possible');
  assert.equal(fake.sockets.length, sockets + 1);
});

// The webhook's rules through a real kernel and the fake Graph API: the signature is checked on the raw bytes before
// anything is stored (401, no turn); Meta's verification GET is answered with the challenge for the right verify
// token only; the 200 comes only after the journal commit (a failed commit is a 500 and Meta's redelivery lands once);
// a redelivered message is one turn; statuses are acknowledged and ignored; a refused token stops the channel; and
// cloud mode loads nothing of WhatsApp Web (Baileys).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { refuseWrites, startAgentTestKernel, startWhatsAppFake, waitFor, type AgentTestKernel, type WhatsAppFake } from '@talon/testing';
import { WEBHOOK_ROUTE } from '../config.ts';
import { configureFor, MODULES } from './helpers.ts';

let k: AgentTestKernel;
let wa: WhatsAppFake;

const configure = async (body: Record<string, unknown>) => {
  const res = await k.request('/api/channels/whatsapp/configure', { method: 'POST', json: body });
  assert.equal(res.status, 200, await res.text());
};
const state = async () => (await (await k.request('/api/channels/whatsapp')).json()) as { state: string; last_error: string | null };
const texts = (to: string) => wa.sent.filter((m) => m.to === to).map((m) => m.text);
const until = <T>(probe: () => T | undefined | Promise<T | undefined>, what: string) => waitFor(probe, 15_000, what);

before(async () => {
  wa = await startWhatsAppFake({ retryMs: 200 });
  k = await startAgentTestKernel({ only: MODULES });
  await k.spawnAgent('helper');
  wa.deliverTo(k.url + WEBHOOK_ROUTE);
  await configure({ ...configureFor(wa), dm_policy: 'open' });
  await until(async () => ((await state()).state === 'connected' ? true : undefined), 'connected');
});
after(async () => {
  await k?.stop();
  await wa?.stop();
});

test("Meta's verification GET: the challenge for the right verify token, 403 for another, nothing for another mode", async () => {
  assert.deepEqual(await wa.verify('1158201444'), { status: 200, text: '1158201444' });
  assert.equal((await wa.verify('1158201444', 'not-the-token')).status, 403);
  const url = `${k.url}${WEBHOOK_ROUTE}?hub.mode=unsubscribe&hub.verify_token=${wa.verifyToken}&hub.challenge=1`;
  assert.equal((await fetch(url)).status, 400);
});

test('a POST without the signature, or signed with another secret, is 401 and reaches nothing', async () => {
  const asked = k.fake.requests.length;
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '1',
        changes: [
          {
            field: 'messages',
            value: {
              metadata: { phone_number_id: wa.phoneNumberId },
              messages: [{ from: '4917', id: 'wamid.forged', timestamp: '1', type: 'text', text: { body: 'forged' } }],
            },
          },
        ],
      },
    ],
  });
  assert.equal((await wa.post(body)).status, 401);
  const forged = await wa.post(body, `sha256=${'0'.repeat(64)}`);
  assert.equal(forged.status, 401);
  assert.doesNotMatch(forged.text, new RegExp(wa.appSecret));
  // The right signature over other bytes (one space added) is refused too: the signature covers the exact body.
  assert.equal((await wa.post(`${body} `, wa.sign(body))).status, 401);
  await sleep(300);
  assert.equal(k.fake.requests.length, asked, 'no turn');
  assert.deepEqual(texts('4917'), []);
});

test('a signed body that is not a WhatsApp payload is a 400 naming what is wrong', async () => {
  const body = JSON.stringify({ object: 'page', entry: [] });
  const res = await wa.post(body, wa.sign(body));
  assert.equal(res.status, 400);
  assert.match(res.text, /whatsapp_business_account/);
  assert.equal((await wa.post('{not json', wa.sign('{not json'))).status, 400);
});

test('statuses are acknowledged and make no turn', async () => {
  const asked = k.fake.requests.length;
  const before = wa.deliveries.length;
  wa.injectStatus('wamid.sent-earlier', '4918', 'read');
  await until(() => (wa.deliveries.length > before ? true : undefined), 'the status delivered');
  assert.equal(wa.deliveries.at(-1)!.status, 200);
  await sleep(300);
  assert.equal(k.fake.requests.length, asked);
});

test('the same message delivered again (same wamid) is one turn and one reply', async () => {
  k.fake.enqueue({ text: 'once' });
  const first = wa.injectMessage({ from: '4919', text: 'hello twice' });
  await until(() => (texts('4919').length === 1 ? true : undefined), 'the reply');
  wa.injectMessage({ from: '4919', text: 'hello twice', id: first.id });
  await until(() => (wa.deliveries.filter((d) => d.body.includes(first.id)).length === 2 ? true : undefined), 'the second delivery');
  const last = wa.deliveries.filter((d) => d.body.includes(first.id)).at(-1)!;
  assert.equal(last.status, 200, 'a duplicate is acknowledged');
  await sleep(500);
  assert.deepEqual(texts('4919'), ['once']);
});

test('a failed journal commit answers 500: Meta delivers again, the message lands once and is answered once', async () => {
  k.fake.enqueue({ text: 'answered once' });
  const undo = await refuseWrites(k.kernel.store, 'channels_inbound');
  const pushed = wa.injectMessage({ from: '4920', text: 'keep me' });
  const statuses = () => wa.deliveries.filter((d) => d.body.includes(pushed.id)).map((d) => d.status);
  try {
    await until(() => (statuses().includes(500) ? true : undefined), 'the failed commit answered 500');
  } finally {
    await undo();
  }
  await until(() => (texts('4920').length === 1 ? true : undefined), 'the reply to the redelivery');
  await until(() => (statuses().at(-1) === 200 ? true : undefined), 'the redelivery acknowledged');
  assert.ok(!statuses().slice(0, -1).includes(200), `nothing acknowledged before the commit: ${statuses().join(',')}`);
  await sleep(300);
  assert.deepEqual(texts('4920'), ['answered once']);
});

test('a reply goes as a text message with link previews off (no fetch of a URL the agent wrote)', async () => {
  k.fake.enqueue({ text: 'plain words' });
  wa.injectMessage({ from: '4921', text: 'a link?' });
  await until(() => (texts('4921').length === 1 ? true : undefined), 'the reply');
  const call = wa.calls.filter((c) => c.method === 'POST /{id}/messages' && c.params.to === '4921').at(-1)!;
  assert.equal(call.params.type, 'text');
  assert.deepEqual(call.params.text, { body: 'plain words', preview_url: false });
});

test('a file Graph no longer has is named for the agent and the message still answered (not redelivered for days)', async () => {
  k.fake.enqueue({ text: 'no file, still answered' });
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '1',
        changes: [
          {
            field: 'messages',
            value: {
              metadata: { phone_number_id: wa.phoneNumberId },
              messages: [
                {
                  from: '4922',
                  id: 'wamid.gone',
                  timestamp: '1',
                  type: 'document',
                  document: { id: '999', mime_type: 'application/pdf', filename: 'gone.pdf', caption: 'read this' },
                },
              ],
            },
          },
        ],
      },
    ],
  });
  assert.equal((await wa.post(body, wa.sign(body))).status, 200);
  await until(() => (texts('4922').length === 1 ? true : undefined), 'the reply');
  assert.match(JSON.stringify(k.fake.requests.at(-1)!.body.messages), /gone\.pdf/);
});

test('owner notices go to the configured owner numbers', async () => {
  await configure({ owners: ['4930111'] });
  await until(async () => ((await state()).state === 'connected' ? true : undefined), 'connected again');
  const channels = k.kernel.services.view<{ notifyOwners(text: string): Promise<number> }>('channels.service');
  assert.equal(await channels.notifyOwners('the disk is full'), 1);
  await until(() => (texts('4930111').length === 1 ? true : undefined), 'the notice');
  assert.match(texts('4930111')[0] ?? '', /the disk is full/);
});

test('a refused token stops the channel with last_error, the token not shown; missing app_secret names the field', async () => {
  await configure({ token: 'EAAG-this-token-is-refused' });
  const refused = await until(async () => {
    const s = await state();
    return s.state === 'error' ? s : undefined;
  }, 'stopped');
  assert.match(refused.last_error ?? '', /access token was refused/);
  assert.doesNotMatch(refused.last_error ?? '', /this-token-is-refused/);
  assert.equal((await k.request('/api/channels/whatsapp/configure', { method: 'DELETE' })).status, 200);
  await configure({ token: wa.token, phone_number_id: wa.phoneNumberId, verify_token: wa.verifyToken, api_url: wa.apiUrl, dm_policy: 'open' });
  const missing = await until(async () => {
    const s = await state();
    return s.state === 'error' ? s : undefined;
  }, 'stopped');
  assert.match(missing.last_error ?? '', /app_secret/);
});

test('cloud mode loads nothing of WhatsApp Web: neither Baileys nor its libsignal', () => {
  // Web mode loads Baileys by import(); the CommonJS packages under it (libsignal) then show in the require cache
  // (web-run.test.ts checks that they do).
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => /[/\\]node_modules[/\\](baileys|libsignal)[/\\]/.test(f));
  assert.deepEqual(loaded, []);
});

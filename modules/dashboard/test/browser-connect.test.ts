/** The Connect views: webhooks (created, tested, deleted), paired devices (QR code, a device paired and revoked), peers. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { axeViolations, browserTest, openPage, screenshot, startEnv, type Env } from './helpers.ts';

const SECRET = 'peer-secret-0123456789abcdef';

let env: Env | undefined;
let alpha: TestKernel | undefined;
let target: Server | undefined;
/** What the webhook target received. */
const received: Array<{ headers: Record<string, unknown>; body: string }> = [];

before(async () => {
  if (browserTest.skip) return;
  target = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => target!.listen(0, '127.0.0.1', r));
  alpha = await startTestKernel({
    only: ['peers'],
    config: `[peers]\nlisten = "127.0.0.1:0"\nshared_secret = "${SECRET}"\nnode_id = "node-alpha"\nnode_name = "alpha"\n`,
  });
  const config = [
    '[webhooks]',
    'allow_hosts = ["127.0.0.1"]',
    '[pairing]',
    'enabled = true',
    '[peers]',
    `shared_secret = "${SECRET}"`,
    'node_id = "node-beta"',
    'node_name = "beta"',
    'reconnect_ms = 100',
  ].join('\n');
  env = await startEnv(config, ['net', 'secrets', 'webhooks', 'pairing', 'peers']);
});
after(async () => {
  await env?.stop();
  await alpha?.stop();
  await new Promise((r) => (target ? target.close(r) : r(undefined)));
});

test('webhooks: one created from the form and listed, a test delivered, a refusal in words, deleted after a confirm', browserTest, async () => {
  const url = `http://127.0.0.1:${(target!.address() as AddressInfo).port}/hook`;
  const { page, problems } = await openPage(env!, '/#/webhooks');
  const form = page.getByRole('form', { name: 'New outbound webhook' });
  await form.getByLabel('Name').fill('ci');
  await form.getByLabel('Target URL').fill(url);
  await form.getByLabel('Events (separated by commas or spaces)').fill('agent_spawned, no_such_event');
  await form.getByLabel(/Signing secret/).fill('a-signing-secret');
  await form.getByRole('button', { name: 'Create' }).click();
  await form.locator('.error').filter({ hasText: 'no_such_event' }).waitFor();
  await form.getByLabel('Events (separated by commas or spaces)').fill('agent_spawned, message_completed');
  await form.getByRole('button', { name: 'Create' }).click();
  await form.getByRole('status').filter({ hasText: 'Created ci' }).waitFor();
  const row = page.getByRole('row', { name: /^ci / });
  assert.match((await row.textContent()) ?? '', /agent_spawned, message_completed.*active/);
  assert.match((await row.textContent()) ?? '', /\(signed\)/);
  const listed = (await (await env!.k.request('/api/webhooks')).json()) as { webhooks: Array<{ name: string; url: string; has_secret: boolean }> };
  assert.deepEqual(
    listed.webhooks.map((w) => [w.name, w.url, w.has_secret]),
    [['ci', url, true]],
  );

  await row.getByRole('button', { name: 'Send a test to ci' }).click();
  await page.getByRole('status').filter({ hasText: 'the target answered 200' }).waitFor();
  assert.equal(received.length, 1);
  assert.match(String(received[0].headers['x-webhook-signature']), /^sha256=[0-9a-f]{64}$/);

  const events = page.getByRole('form', { name: 'New event webhook' });
  await events.getByLabel('Target URL').fill(url);
  await events.getByLabel('Event').fill('agent_spawned');
  await events.getByLabel(/Signing secret/).fill('another-secret');
  await events.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('row', { name: /^agent_spawned / }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'webhooks');

  await row.getByRole('button', { name: 'Delete ci' }).click();
  await row.getByRole('button', { name: 'Delete ci and its journal' }).click();
  await page.getByRole('status').filter({ hasText: 'Deleted ci' }).waitFor();
  assert.deepEqual(((await (await env!.k.request('/api/webhooks')).json()) as { webhooks: unknown[] }).webhooks, []);
  // The refused create is the one expected failure the browser logs.
  assert.deepEqual(
    problems.filter((p) => !/status of 400 .*\/api\/webhooks\)$/.test(p)),
    [],
  );
});

test('pairing: the QR code as an image, a device paired with the code appears, revoked after a confirm', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/pairing');
  await page.getByRole('button', { name: 'Pair a device' }).click();
  const qr = page.getByRole('img', { name: /^QR code for pairing code / });
  await qr.waitFor();
  assert.match((await qr.getAttribute('src')) ?? '', /^data:image\/png;base64,/);
  const code = /pairing code (\S+)$/.exec((await qr.getAttribute('alt')) ?? '')![1];
  // The phone's side: it completes the pairing with the code (a public endpoint).
  const completed = await env!.k.request('/api/pairing/complete', {
    method: 'POST',
    json: { pairing_code: code, display_name: 'Pixel 9', platform: 'android' },
  });
  assert.equal(completed.status, 200, await completed.clone().text());
  const { token } = (await completed.json()) as { token: string };
  // The list is read again while the code is shown: the device appears by itself.
  const row = page.getByRole('row', { name: /Pixel 9/ });
  await row.waitFor({ timeout: 8000 });
  assert.match((await row.textContent()) ?? '', /android/);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'pairing');

  await row.getByRole('button', { name: 'Revoke Pixel 9' }).click();
  await row.getByRole('button', { name: 'Revoke Pixel 9 now' }).click();
  await page.getByRole('status').filter({ hasText: 'Revoked Pixel 9' }).waitFor();
  assert.equal(await page.getByRole('row', { name: /Pixel 9/ }).count(), 0);
  assert.deepEqual(((await (await env!.k.request('/api/pairing/devices')).json()) as { devices: unknown[] }).devices, []);
  assert.ok(token);
  assert.deepEqual(problems, []);
});

test('peers: an address added connects and lists the peer with its state; removed, it goes', browserTest, async () => {
  const alphaAddress = ((await (await alpha!.request('/api/network/status')).json()) as { listen_address: string }).listen_address;
  const { page, problems } = await openPage(env!, '/#/peers');
  await page.getByText('Peer traffic is off').waitFor();
  await page.getByLabel('Add a peer (host:port)').fill(alphaAddress);
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page
    .getByRole('status')
    .filter({ hasText: `Added ${alphaAddress}` })
    .waitFor();
  // Live: the link's state and the peer arrive with the next reads.
  const link = page.getByRole('row', { name: new RegExp(alphaAddress.replace(/\./g, '\\.')) }).first();
  await waitFor(async () => /connected.*node-alpha/.test((await link.textContent()) ?? ''), 10_000, 'the link connected');
  await page.getByRole('row', { name: /alpha node-alpha/ }).waitFor();
  assert.match((await page.getByRole('row', { name: /alpha node-alpha/ }).textContent()) ?? '', /connected/);
  const connect = ((await (await env!.k.request('/api/config')).json()) as { peers: { connect: string[] } }).peers.connect;
  assert.deepEqual(connect, [alphaAddress], 'kept in the configuration');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'peers');

  await link.getByRole('button', { name: `Remove ${alphaAddress}` }).click();
  await page.getByRole('button', { name: `Remove ${alphaAddress} now` }).click();
  await page
    .getByRole('status')
    .filter({ hasText: `Removed ${alphaAddress}` })
    .waitFor();
  await page.getByText('No peer yet.').waitFor();
  assert.deepEqual(((await (await env!.k.request('/api/peers')).json()) as { peers: unknown[] }).peers, []);
  assert.deepEqual(problems, []);
});

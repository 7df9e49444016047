// The WhatsApp fake speaks the Cloud API as Meta does: Graph errors for a bad token, the media flow, signed webhook
// deliveries sent again until a 2xx, and the verification GET.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../../../testing-kit/src/wait.ts';
import { startWhatsAppFake } from './server.ts';

test('Graph calls: a bad token is 401 code 190; upload, send by id, media url and download', async () => {
  const wa = await startWhatsAppFake();
  try {
    const bad = await fetch(`${wa.apiUrl}/${wa.phoneNumberId}`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(bad.status, 401);
    assert.equal(((await bad.json()) as { error: { code: number } }).error.code, 190);
    const auth = { authorization: `Bearer ${wa.token}` };
    const form = new FormData();
    form.set('messaging_product', 'whatsapp');
    form.set('type', 'text/plain');
    form.set('file', new Blob([Buffer.from('hello')], { type: 'text/plain' }), 'a.txt');
    const { id } = (await (await fetch(`${wa.apiUrl}/${wa.phoneNumberId}/media`, { method: 'POST', headers: auth, body: form })).json()) as { id: string };
    const send = await fetch(`${wa.apiUrl}/${wa.phoneNumberId}/messages`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ messaging_product: 'whatsapp', to: '49', type: 'document', document: { id, filename: 'a.txt' } }),
    });
    assert.equal(send.status, 200);
    assert.deepEqual(wa.filesTo('49'), [{ name: 'a.txt', mediaType: 'text/plain', data: Buffer.from('hello') }]);
    const info = (await (await fetch(`${wa.apiUrl}/${id}`, { headers: auth })).json()) as { url: string };
    assert.equal(await (await fetch(info.url, { headers: auth })).text(), 'hello');
    assert.equal((await fetch(info.url)).status, 401, 'the download needs the token');
    wa.rateLimitNext();
    const limited = await fetch(`${wa.apiUrl}/${wa.phoneNumberId}/messages`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ messaging_product: 'whatsapp', to: '49', type: 'text', text: { body: 'x' } }),
    });
    assert.equal(limited.status, 429);
  } finally {
    await wa.stop();
  }
});

test('webhooks are signed with the app secret and sent again until a 2xx', async () => {
  const wa = await startWhatsAppFake({ retryMs: 50 });
  const got: Array<{ body: string; signature: unknown }> = [];
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ body: Buffer.concat(chunks).toString('utf8'), signature: req.headers['x-hub-signature-256'] });
      res.writeHead(got.length < 3 ? 500 : 200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    wa.deliverTo(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`);
    const { id } = wa.injectMessage({ from: '49', text: 'hi' });
    await waitFor(() => (wa.deliveries.length === 3 ? true : undefined), 5_000, 'three attempts');
    assert.deepEqual(
      wa.deliveries.map((d) => d.status),
      [500, 500, 200],
    );
    assert.ok(got.every((g) => g.body.includes(id)));
    assert.equal(got[0]!.signature, `sha256=${createHmac('sha256', wa.appSecret).update(got[0]!.body).digest('hex')}`);
  } finally {
    receiver.close();
    await wa.stop();
  }
});

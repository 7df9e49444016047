// The Telegram fake's own protocol: what an adapter's tests will lean on (offsets and redelivery, the 409 of a second
// poller, 401, 429 retry_after, the HTML parse error, multipart uploads and file downloads, webhook delivery), driven
// with plain fetch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@talon/testing';
import { startTelegramFake } from './server.ts';

async function call(apiRoot: string, token: string, method: string, body?: Record<string, unknown> | FormData) {
  const res = await fetch(`${apiRoot}/bot${token}/${method}`, {
    method: 'POST',
    ...(body instanceof FormData ? { body } : body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  return {
    status: res.status,
    body: (await res.json()) as { ok: boolean; result?: any; error_code?: number; description?: string; parameters?: { retry_after: number } },
  };
}

test('getUpdates: updates are redelivered until an offset past them confirms them', async () => {
  const tg = await startTelegramFake();
  try {
    const u1 = tg.injectMessage({ chat: { id: 7, type: 'private' }, text: 'one' });
    const u2 = tg.injectMessage({ chat: { id: 7, type: 'private' }, text: 'two' });
    const first = await call(tg.apiRoot, tg.token, 'getUpdates', { timeout: 0 });
    assert.deepEqual(
      first.body.result.map((u: any) => u.message.text),
      ['one', 'two'],
    );
    // Not confirmed: asked again without an offset, both come back.
    const again = await call(tg.apiRoot, tg.token, 'getUpdates', { timeout: 0 });
    assert.deepEqual(
      again.body.result.map((u: any) => u.update_id),
      [u1.update_id, u2.update_id],
    );
    // Offset = last + 1 confirms both; nothing is pending afterwards.
    const after = await call(tg.apiRoot, tg.token, 'getUpdates', { offset: u2.update_id + 1, timeout: 0 });
    assert.deepEqual(after.body.result, []);
    assert.equal(tg.pending().length, 0);
    // Offset = u1 + 1 on fresh updates confirms only the first one.
    const u3 = tg.injectMessage({ chat: { id: 7, type: 'private' }, text: 'three' });
    const u4 = tg.injectMessage({ chat: { id: 7, type: 'private' }, text: 'four' });
    const partial = await call(tg.apiRoot, tg.token, 'getUpdates', { offset: u3.update_id + 1, timeout: 0 });
    assert.deepEqual(
      partial.body.result.map((u: any) => u.update_id),
      [u4.update_id],
    );
  } finally {
    await tg.stop();
  }
});

test('getUpdates: a long poll answers as soon as an update arrives; a second poller ends the first with 409', async () => {
  const tg = await startTelegramFake();
  try {
    const started = Date.now();
    const waiting = call(tg.apiRoot, tg.token, 'getUpdates', { timeout: 10 });
    setTimeout(() => tg.injectMessage({ chat: { id: -100, type: 'supergroup', title: 'g' }, text: 'hi' }), 100);
    const got = await waiting;
    assert.equal(got.body.result[0].message.text, 'hi');
    assert.ok(Date.now() - started < 5_000, 'answered on arrival, not at the timeout');

    const first = call(tg.apiRoot, tg.token, 'getUpdates', { offset: got.body.result[0].update_id + 1, timeout: 10 });
    await new Promise((r) => setTimeout(r, 100));
    const second = call(tg.apiRoot, tg.token, 'getUpdates', { timeout: 1 });
    const conflict = await first;
    assert.equal(conflict.status, 409);
    assert.match(conflict.body.description ?? '', /^Conflict: terminated by other getUpdates request/);
    assert.deepEqual((await second).body.result, []);
  } finally {
    await tg.stop();
  }
});

test('errors: 401 for a bad token, 429 with retry_after, the HTML parse error, an empty text', async () => {
  const tg = await startTelegramFake();
  try {
    const unauthorized = await call(tg.apiRoot, '1:wrong', 'getMe');
    assert.deepEqual([unauthorized.status, unauthorized.body], [401, { ok: false, error_code: 401, description: 'Unauthorized' }]);
    assert.equal((await call(tg.apiRoot, tg.token, 'getMe')).body.result.username, 'talon_test_bot');

    tg.failNext('sendMessage', { error_code: 429, description: 'Too Many Requests: retry after 3', parameters: { retry_after: 3 } });
    const limited = await call(tg.apiRoot, tg.token, 'sendMessage', { chat_id: 7, text: 'x' });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.parameters?.retry_after, 3);
    assert.equal((await call(tg.apiRoot, tg.token, 'sendMessage', { chat_id: 7, text: 'x' })).status, 200, 'only the next call fails');

    for (const html of ['<b>bold', 'a <foo>x</foo>', 'x < y', 'fish & chips', '<i>a</b>']) {
      const r = await call(tg.apiRoot, tg.token, 'sendMessage', { chat_id: 7, text: html, parse_mode: 'HTML' });
      assert.equal(r.status, 400, html);
      assert.match(r.body.description ?? '', /^Bad Request: can't parse entities: /, html);
    }
    const good = await call(tg.apiRoot, tg.token, 'sendMessage', {
      chat_id: 7,
      text: '<b>1 &lt; 2</b> &amp; <a href="https://x.test">x</a>',
      parse_mode: 'HTML',
    });
    assert.equal(good.body.result.text, '1 < 2 & x');
    assert.equal((await call(tg.apiRoot, tg.token, 'sendMessage', { chat_id: 7, text: '' })).status, 400);
    assert.equal(
      (await call(tg.apiRoot, tg.token, 'sendMessage', { chat_id: 7, text: 'x'.repeat(4097) })).body.description,
      'Bad Request: message is too long',
    );
    assert.equal((await call(tg.apiRoot, tg.token, 'sendMessage', { chat_id: 7, text: '😀'.repeat(2048) })).status, 200, '4,096 UTF-16 units fit');
  } finally {
    await tg.stop();
  }
});

test('files: sendDocument multipart, getFile and the download; an inbound document can be fetched; every call recorded', async () => {
  const tg = await startTelegramFake();
  try {
    const form = new FormData();
    form.set('chat_id', '7');
    form.set('caption', 'the report');
    form.set('document', new Blob([Buffer.from('hello file')], { type: 'text/plain' }), 'report.txt');
    const sent = await call(tg.apiRoot, tg.token, 'sendDocument', form);
    assert.equal(sent.body.result.document.file_name, 'report.txt');
    assert.equal(sent.body.result.caption, 'the report');
    const recorded = tg.callsOf('sendDocument')[0]!.params.document as { content: Buffer };
    assert.equal(recorded.content.toString(), 'hello file');

    const update = tg.injectMessage({ chat: { id: 7, type: 'private' }, document: { name: 'in.bin', content: Buffer.from([1, 2, 3]) } });
    const fileId = (update.message as { document: { file_id: string } }).document.file_id;
    const info = await call(tg.apiRoot, tg.token, 'getFile', { file_id: fileId });
    const download = await fetch(`${tg.apiRoot}/file/bot${tg.token}/${info.body.result.file_path}`);
    assert.deepEqual([...Buffer.from(await download.arrayBuffer())], [1, 2, 3]);
    assert.equal((await fetch(`${tg.apiRoot}/file/bot1:wrong/${info.body.result.file_path}`)).status, 404);

    assert.equal((await call(tg.apiRoot, tg.token, 'sendChatAction', { chat_id: 7, action: 'typing' })).body.result, true);
    assert.deepEqual(
      tg.calls.map((c) => c.method),
      ['sendDocument', 'getFile', 'sendChatAction'],
    );
  } finally {
    await tg.stop();
  }
});

test("uploads in grammY's multipart dialect: compact part headers, the file named by attach://", async () => {
  const tg = await startTelegramFake();
  try {
    const b = 'grammyboundary';
    const body = Buffer.concat([
      Buffer.from(`--${b}\r\ncontent-disposition:form-data;name="chat_id"\r\n\r\n7\r\n--${b}\r\n`),
      Buffer.from(`content-disposition:form-data;name="document"\r\n\r\nattach://abc\r\n--${b}\r\n`),
      Buffer.from(`content-disposition:form-data;name="abc";filename=r.bin\r\ncontent-type:application/octet-stream\r\n\r\n`),
      Buffer.from([0, 255, 128]),
      Buffer.from(`\r\n--${b}--\r\n`),
    ]);
    const res = await fetch(`${tg.apiRoot}/bot${tg.token}/sendDocument`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${b}` },
      body,
    });
    assert.equal(res.status, 200);
    const doc = (tg.callsOf('sendDocument')[0]!.params.document ?? {}) as { name: string; content: Buffer };
    assert.equal(doc.name, 'r.bin');
    assert.deepEqual([...doc.content], [0, 255, 128]);
  } finally {
    await tg.stop();
  }
});

test('dropConnections: a waiting long poll loses its socket with no answer; its updates stay pending', async () => {
  const tg = await startTelegramFake();
  try {
    assert.equal(tg.dropConnections(), 0, 'no poll in flight');
    const waiting = call(tg.apiRoot, tg.token, 'getUpdates', { timeout: 10 });
    const started = Date.now();
    while (tg.callsOf('getUpdates').length === 0 && Date.now() - started < 5_000) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(tg.dropConnections(), 1);
    await assert.rejects(waiting, /fetch failed|socket|terminated/i);
    const u = tg.injectMessage({ chat: { id: 7, type: 'private' }, text: 'after the drop' });
    const next = await call(tg.apiRoot, tg.token, 'getUpdates', { timeout: 0 });
    assert.deepEqual(
      next.body.result.map((x: any) => x.update_id),
      [u.update_id],
    );
  } finally {
    await tg.stop();
  }
});

test('an inbound photo comes as sizes smallest first, each downloadable, without a file name', async () => {
  const tg = await startTelegramFake();
  try {
    const update = tg.injectMessage({ chat: { id: 7, type: 'private' }, caption: 'look', photo: { content: Buffer.from([9, 8, 7]) } });
    const sizes = (update.message as { photo: Array<{ file_id: string; width: number; file_name?: string }> }).photo;
    assert.ok(sizes.length >= 2 && sizes[0]!.width < sizes.at(-1)!.width);
    assert.ok(sizes.every((s) => s.file_name === undefined));
    const info = await call(tg.apiRoot, tg.token, 'getFile', { file_id: sizes.at(-1)!.file_id });
    const download = await fetch(`${tg.apiRoot}/file/bot${tg.token}/${info.body.result.file_path}`);
    assert.equal(download.headers.get('content-type'), 'image/jpeg');
    assert.deepEqual([...Buffer.from(await download.arrayBuffer())], [9, 8, 7]);
  } finally {
    await tg.stop();
  }
});

test('webhook: updates are POSTed with the secret header until a 2xx answers; getUpdates is a 409; deleteWebhook ends it', async () => {
  const tg = await startTelegramFake({ webhookRetryMs: 50 });
  const got: Array<{ secret: unknown; update_id: number }> = [];
  let refuse = 1;
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (refuse-- > 0) return void res.writeHead(500).end();
      got.push({ secret: req.headers['x-telegram-bot-api-secret-token'], update_id: (JSON.parse(body) as { update_id: number }).update_id });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  try {
    assert.equal((await call(tg.apiRoot, tg.token, 'setWebhook', { url, secret_token: 'bad secret!' })).status, 400);
    const set = await call(tg.apiRoot, tg.token, 'setWebhook', { url, secret_token: 's3cret_-', allowed_updates: ['message'] });
    assert.equal(set.body.result, true);
    const info = await call(tg.apiRoot, tg.token, 'getWebhookInfo');
    assert.equal(info.body.result.url, url);
    assert.deepEqual(info.body.result.allowed_updates, ['message']);
    const polled = await call(tg.apiRoot, tg.token, 'getUpdates', { timeout: 0 });
    assert.equal(polled.status, 409);
    assert.match(polled.body.description!, /webhook is active/);

    const u = tg.injectMessage({ chat: { id: 7, type: 'private' }, text: 'pushed' });
    await waitFor(() => got.length === 1, 5_000, 'the delivery');
    assert.deepEqual(got, [{ secret: 's3cret_-', update_id: u.update_id }]);
    // The fake records a delivery when it has read the receiver's answer, a moment after the receiver got it.
    await waitFor(() => tg.deliveries.length === 2, 5_000, 'the second delivery recorded');
    assert.deepEqual(
      tg.deliveries.map((d) => d.status),
      [500, 200],
      'refused once, delivered again',
    );
    assert.equal(tg.pending().length, 0);

    assert.equal((await call(tg.apiRoot, tg.token, 'deleteWebhook')).body.result, true);
    assert.equal((await call(tg.apiRoot, tg.token, 'getWebhookInfo')).body.result.url, '');
    tg.injectMessage({ chat: { id: 7, type: 'private' }, text: 'polled' });
    const after = await call(tg.apiRoot, tg.token, 'getUpdates', { timeout: 0 });
    assert.equal(after.body.result[0].message.text, 'polled');
    assert.equal(got.length, 1, 'no delivery without a webhook');
  } finally {
    await tg.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});

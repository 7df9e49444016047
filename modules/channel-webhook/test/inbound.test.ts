// The inbound route's refusals and its answer after the commit: a bad or stale signature is 401, a bad body 400 naming
// the field, a repeat of an id is acknowledged without a second turn; replies carry a signature the receiver checks;
// files in the body are checked one by one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import { MODULES, postInbound, SECRET } from './helpers.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { signHeaders } from '../services/signature.ts';
import { MAX_MEDIA_BYTES } from '../services/media.ts';

let k: AgentTestKernel;
let receiver: Receiver;
before(async () => {
  receiver = await startReceiver(SECRET);
  k = await startAgentTestKernel({ only: MODULES });
  await k.spawnAgent('helper');
  const res = await k.request('/api/channels/webhook/configure', { method: 'POST', json: { token: SECRET, callback_url: receiver.url, dm_policy: 'open' } });
  assert.equal(res.status, 200, await res.text());
  await waitFor(async () => ((await (await k.request('/api/channels/webhook')).json()) as { state: string }).state === 'connected', 10_000, 'connected');
});
after(async () => {
  await k?.stop();
  await receiver?.stop();
});

const message = (id: string, text = 'hi') => ({ id, chat_id: 'c1', sender_id: 'u1', text });

test('a wrong secret, a stale timestamp or no signature is 401 and reaches no agent', async () => {
  const asked = k.fake.requests.length;
  const wrong = await postInbound(k, message('a1'), { secret: 'someone-else' });
  assert.equal(wrong.status, 401);
  assert.match(((await wrong.json()) as { error: string }).error, /does not match/);
  const stale = await postInbound(k, message('a2'), { nowMs: Date.now() - 6 * 60_000 });
  assert.equal(stale.status, 401);
  assert.match(((await stale.json()) as { error: string }).error, /window/);
  const unsigned = await fetch(k.url + '/api/channels/webhook/inbound', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(message('a3')),
  });
  assert.equal(unsigned.status, 401);
  // A body changed after signing no longer matches its signature.
  const raw = JSON.stringify(message('a4'));
  const tampered = await fetch(k.url + '/api/channels/webhook/inbound', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signHeaders(SECRET, raw) },
    body: raw.replace('"hi"', '"run rm -rf"'),
  });
  assert.equal(tampered.status, 401);
  await sleep(200);
  assert.equal(k.fake.requests.length, asked, 'no turn for a refused request');
});

test('a body missing a field or of the wrong type is 400 naming the field', async () => {
  for (const [body, field] of [
    [{ chat_id: 'c1', sender_id: 'u1', text: 'x' }, 'id'],
    [{ id: 'b2', chat_id: 'c1', sender_id: 'u1', text: 7 }, 'text'],
    [{ id: 'b3', chat_id: 'c1', sender_id: 'u1', text: 'x', is_group: 'yes' }, 'is_group'],
  ] as const) {
    const res = await postInbound(k, body);
    assert.equal(res.status, 400, field);
    assert.match(((await res.json()) as { error: string }).error, new RegExp(`^${field}:`));
  }
  const notJson = await postInbound(k, '{nope');
  assert.equal(notJson.status, 400);
});

test('the same id delivered twice is answered 200 both times and runs one turn; the reply is signed', async () => {
  const before = k.fake.requests.length;
  k.fake.enqueue({ text: 'once only' });
  const first = await postInbound(k, { ...message('dup-1', 'count me once'), chat_id: 'c-dup' });
  assert.deepEqual(await first.json(), { ok: true, duplicate: false });
  const second = await postInbound(k, { ...message('dup-1', 'count me once'), chat_id: 'c-dup' });
  assert.deepEqual(await second.json(), { ok: true, duplicate: true });
  await waitFor(() => receiver.replies.some((r) => r.chat_id === 'c-dup'), 10_000, 'the reply');
  await sleep(300);
  assert.equal(k.fake.requests.length, before + 1);
  assert.deepEqual(
    receiver.replies.filter((r) => r.chat_id === 'c-dup').map((r) => r.text),
    ['once only'],
  );
});

test('files in the body: each checked (name, type, one of base64 data or an http(s) url, the size cap), 400 naming it', async () => {
  const file = (f: Record<string, unknown>) => ({ ...message(`f-${Math.random()}`, 'a file'), media: [{ name: 'a.png', media_type: 'image/png', ...f }] });
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ data: 'not base64!' }, /^media\[0\]\.data: expected base64/],
    [{ data: 'QUJD', url: 'https://example.com/a.png' }, /^media\[0\]: give exactly one of data/],
    [{}, /^media\[0\]: give exactly one of data/],
    [{ url: 'javascript:alert(1)' }, /^media\[0\]\.url: expected an http\(s\) URL/],
    [{ url: 'file:///etc/passwd' }, /^media\[0\]\.url: expected an http\(s\) URL/],
    [{ name: '', data: 'QUJD' }, /^media\[0\]\.name:/],
    [{ media_type: 'png', data: 'QUJD' }, /^media\[0\]\.media_type:/],
    [{ data: 'QUJD', path: '/tmp/x' }, /^media\[0\]\.path: unknown field/],
    // Over the cap, yet within the body limit: the cap is what refuses it.
    [{ data: Buffer.alloc(MAX_MEDIA_BYTES + 1).toString('base64') }, /^media\[0\]\.data: .*at most/],
  ];
  const asked = k.fake.requests.length;
  for (const [f, error] of cases) {
    const res = await postInbound(k, file(f));
    assert.equal(res.status, 400, String(error));
    assert.match(((await res.json()) as { error: string }).error, error);
  }
  const notArray = await postInbound(k, { ...message('f-arr'), media: { name: 'a' } });
  assert.equal(notArray.status, 400);
  assert.match(((await notArray.json()) as { error: string }).error, /^media:/);
  await sleep(200);
  assert.equal(k.fake.requests.length, asked, 'no turn for a refused body');
});

test('a file by url reaches the agent as a named link; a file without a caption is taken', async () => {
  k.fake.enqueue({ text: 'seen the link' }, { text: 'seen the file' });
  const linked = await postInbound(k, {
    ...message('f-url', 'look at this'),
    chat_id: 'c-files',
    media: [{ name: 'spec.pdf', media_type: 'application/pdf', url: 'https://files.example.com/spec.pdf' }],
  });
  assert.equal(linked.status, 200, await linked.text());
  await waitFor(() => receiver.replies.some((r) => r.chat_id === 'c-files'), 10_000, 'the reply');
  assert.match(
    JSON.stringify(k.fake.requests.at(-1)!.body.messages),
    /look at this\\n\[attachment: spec\.pdf \(application\/pdf\) https:\/\/files\.example\.com\/spec\.pdf\]/,
  );
  const bare = await postInbound(k, {
    ...message('f-bare', ''),
    chat_id: 'c-files-2',
    media: [{ name: 'notes.txt', media_type: 'text/plain', data: Buffer.from('the notes').toString('base64') }],
  });
  assert.equal(bare.status, 200, await bare.text());
  await waitFor(() => receiver.replies.some((r) => r.chat_id === 'c-files-2'), 10_000, 'the reply');
  assert.match(JSON.stringify(k.fake.requests.at(-1)!.body.messages), /attachment: notes\.txt \(text\/plain\)/);
  const empty = await postInbound(k, { ...message('f-empty', ''), chat_id: 'c-files-3' });
  assert.equal(empty.status, 400, 'no text and no file');
});

// The events route through a real kernel: a request without Chat's bearer JWT, or with one of the wrong audience,
// issuer, key or time, is 401 and reaches nothing; other events are answered {} and dropped; a failed commit is a 500;
// a top-level message in a space is answered as a new message, a thread reply in its thread; a repeated requestId
// (a re-send after a crash) makes no second message.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SignJWT } from 'jose';
import { refuseWrites, startAgentTestKernel, startGoogleChatFake, waitFor, type AgentTestKernel, type GoogleChatFake } from '@talon/testing';
import { EVENTS_ROUTE } from '../config.ts';
import { configureOf, MODULES, textsIn } from './harness.ts';

let k: AgentTestKernel;
let chat: GoogleChatFake;
before(async () => {
  chat = await startGoogleChatFake();
  k = await startAgentTestKernel({ only: MODULES });
  await k.spawnAgent('helper');
  const res = await k.request('/api/channels/google_chat/configure', {
    method: 'POST',
    json: { ...configureOf(chat), dm_policy: 'open', group_policy: 'mention' },
  });
  assert.equal(res.status, 200, await res.text());
  await waitFor(async () => ((await (await k.request('/api/channels/google_chat')).json()) as { state: string }).state === 'connected', 10_000, 'connected');
  chat.deliverTo(k.url + EVENTS_ROUTE);
});
after(async () => {
  await k?.stop();
  await chat?.stop();
});

const event = (space: string, id: string, text: string) => ({
  type: 'MESSAGE',
  space: { name: space, type: 'DM' },
  message: { name: `${space}/messages/${id}`, sender: { name: 'users/9', type: 'HUMAN' }, text, thread: { name: `${space}/threads/x` } },
});

test('no token, a forged one, another audience, issuer, an expired one or one that never expires is 401 and nothing is journaled', async () => {
  const asked = k.fake.requests.length;
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const forged = await new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', kid: 'nope' })
    .setIssuer('chat@system.gserviceaccount.com')
    .setAudience(chat.projectNumber)
    .setExpirationTime('1h')
    .sign(stranger);
  const headers = [
    undefined,
    'Bearer not-a-jwt',
    `Bearer ${forged}`,
    `Bearer ${await chat.signEvent({ aud: '123' })}`,
    `Bearer ${await chat.signEvent({ iss: 'someone@else.iam.gserviceaccount.com' })}`,
    `Bearer ${await chat.signEvent({ expSeconds: -120 })}`,
    `Bearer ${await chat.signEvent({ expSeconds: null })}`,
  ];
  for (const h of headers) {
    const res = await chat.postRaw(event('spaces/dm901', 'a', 'let me in'), h);
    assert.equal(res.status, 401, String(h).slice(0, 40));
    assert.match(((await res.json()) as { error: string }).error, /bearer|Authorization/i);
  }
  await sleep(300);
  assert.equal(k.fake.requests.length, asked, 'no turn');
  k.fake.enqueue({ text: 'welcome' });
  assert.equal((await chat.postRaw(event('spaces/dm901', 'a', 'let me in'), `Bearer ${await chat.signEvent()}`)).status, 200);
  await waitFor(() => textsIn(chat, 'spaces/dm901').length === 1 || undefined, 10_000, 'the reply');
});

test('an event other than MESSAGE (the app added to a space) is answered {} and makes no turn', async () => {
  const asked = k.fake.requests.length;
  const res = await chat.postRaw({ type: 'ADDED_TO_SPACE', space: { name: 'spaces/room77', type: 'ROOM' } }, `Bearer ${await chat.signEvent()}`);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {});
  await sleep(300);
  assert.equal(k.fake.requests.length, asked);
});

test('a failed journal commit answers 500 (nothing acknowledged); the same event sent again is answered once', async () => {
  const undo = await refuseWrites(k.kernel.store, 'channels_inbound');
  try {
    assert.equal((await chat.postRaw(event('spaces/dm902', 'b', 'keep me'), `Bearer ${await chat.signEvent()}`)).status, 500);
  } finally {
    await undo();
  }
  k.fake.enqueue({ text: 'answered once' });
  for (let i = 0; i < 2; i++) assert.equal((await chat.postRaw(event('spaces/dm902', 'b', 'keep me'), `Bearer ${await chat.signEvent()}`)).status, 200);
  await waitFor(() => textsIn(chat, 'spaces/dm902').length === 1 || undefined, 10_000, 'the reply');
  await sleep(500);
  assert.deepEqual(textsIn(chat, 'spaces/dm902'), ['answered once']);
});

test('a top-level mention in a space is answered as a new message; a thread reply in its thread', async () => {
  k.fake.enqueue({ text: 'top' }, { text: 'threaded' });
  await chat.injectMessage({ space: 'spaces/room80', dm: false, sender: 'users/5', text: 'hi', mentioned: true });
  await waitFor(() => textsIn(chat, 'spaces/room80').length === 1 || undefined, 10_000, 'the top-level reply');
  const top = chat.messages.find((m) => m.space === 'spaces/room80')!;
  assert.equal(top.replyOption, undefined, 'not put into the asker’s thread');
  await chat.injectMessage({ space: 'spaces/room80', dm: false, sender: 'users/5', text: 'more', mentioned: true, thread: 'spaces/room80/threads/T1' });
  await waitFor(() => textsIn(chat, 'spaces/room80', 'spaces/room80/threads/T1').length === 1 || undefined, 10_000, 'the threaded reply');
  const threaded = chat.messages.find((m) => m.thread === 'spaces/room80/threads/T1')!;
  assert.equal(threaded.replyOption, 'REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
  assert.ok(top.requestId && threaded.requestId && top.requestId !== threaded.requestId, 'each chunk its requestId');
});

test('a signed event whose annotations or attachments are not lists of objects is a 400, not a 500', async () => {
  for (const bad of [{ annotations: 'x' }, { attachment: { contentName: 'a' } }, { annotations: [null] }]) {
    const body = event('spaces/dm903', 'c', 'odd');
    const res = await chat.postRaw({ ...body, message: { ...body.message, ...bad } }, `Bearer ${await chat.signEvent()}`);
    assert.equal(res.status, 400, JSON.stringify(bad));
  }
});

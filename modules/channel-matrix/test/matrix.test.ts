// The Matrix adapter's own rules: invites by policy, encrypted rooms refused, the sync cursor moved only after the
// journal commit.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChannelKit, InboundMessage } from '@talon/channels';
import { startAgentTestKernel, startMatrixFake, waitFor, type AgentTestKernel, type MatrixFake } from '@talon/testing';
import { matrixClient } from '../services/client.ts';
import { Rooms } from '../services/rooms.ts';
import { Syncer } from '../services/sync.ts';
import { configureFor, directContext, MODULES, person } from './helpers.ts';

describe('channel-matrix through a kernel', () => {
  let k: AgentTestKernel;
  let hs: MatrixFake;
  const configure = async (body: Record<string, unknown>) => {
    const res = await k.request('/api/channels/matrix/configure', { method: 'POST', json: body });
    assert.equal(res.status, 200, await res.text());
    await waitFor(async () => ((await (await k.request('/api/channels/matrix')).json()) as { state: string }).state === 'connected', 15_000, 'connected');
  };
  before(async () => {
    hs = await startMatrixFake();
    k = await startAgentTestKernel({ only: MODULES });
    await k.spawnAgent('helper');
  });
  after(async () => {
    await k?.stop();
    await hs?.stop();
  });

  it('answers invites by policy: direct ones by dm_policy (allowlist), rooms by group_policy, encrypted ones never', async () => {
    await configure({ ...configureFor(hs), dm_policy: 'allowlist', allowed_users: [person(1)], group_policy: 'disabled' });
    const allowed = hs.invite(person(1), { direct: true });
    const stranger = hs.invite(person(2), { direct: true });
    const room = hs.invite(person(3), { members: [person(4)] });
    await waitFor(() => hs.joined.length + hs.left.length >= 3, 15_000, 'three invites answered');
    assert.deepEqual(hs.joined, [allowed]);
    assert.deepEqual(hs.left.sort(), [stranger, room].sort());

    await configure({ group_policy: 'mention' });
    const open = hs.invite(person(5), { members: [person(6)] });
    const secret = hs.invite(person(7), { encrypted: true, members: [person(8)] });
    await waitFor(() => hs.joined.includes(open) && hs.left.includes(secret), 15_000, 'room invite joined, encrypted one declined');
    assert.ok(!hs.joined.includes(secret));
  });

  it('does not read or answer an end-to-end encrypted room', async () => {
    await configure({ ...configureFor(hs), dm_policy: 'open', group_policy: 'mention' });
    const asked = k.fake.requests.length;
    const secret = hs.createRoom({ encrypted: true, members: [person(9)] });
    hs.injectMessage(secret, person(9), { algorithm: 'm.megolm.v1.aes-sha2', ciphertext: 'AwgA…' }, 'm.room.encrypted');
    hs.injectMessage(secret, person(9), 'a plaintext message in an encrypted room');
    const plain = hs.createRoom({ members: [person(10)] });
    k.fake.enqueue({ text: 'plain answered' });
    hs.injectMessage(plain, person(10), 'hello');
    await waitFor(() => hs.sent.some((e) => e.room_id === plain), 15_000, 'the plain room answered');
    await sleep(300);
    assert.equal(k.fake.requests.length, asked + 1, 'one turn: none for the encrypted room');
    assert.ok(!hs.sent.some((e) => e.room_id === secret), 'nothing sent into the encrypted room');
  });
});

describe('the sync cursor', () => {
  it('moves past a sync only once its messages are committed; a failed commit gets them again', async () => {
    const hs = await startMatrixFake();
    try {
      const stored: string[] = [];
      const emitted: InboundMessage[] = [];
      let failNext = true;
      const controller = new AbortController();
      const ctx = directContext(async (m: InboundMessage) => {
        if (failNext) {
          failNext = false;
          throw new Error('the database refused the write');
        }
        emitted.push(m);
        return { duplicate: false };
      }, controller.signal);
      const client = matrixClient(ctx, { retryAfterMs: () => undefined } as unknown as ChannelKit, hs.url, hs.token);
      const rooms = new Rooms(client, hs.userId, controller.signal);
      const cursor = { get: async () => stored.at(-1), set: async (v: string) => void stored.push(v) };
      const syncer = new Syncer(ctx, client, rooms, cursor, { ctx, client, rooms, displayName: () => undefined });
      const link = () => ({ ready() {}, traffic() {}, signal: controller.signal });

      const room = hs.createRoom({ members: [person(1)] });
      // The first sync stores a cursor (no history read), then waits.
      const first = syncer.connect(link() as never).catch((err: Error) => err);
      await waitFor(() => stored.length >= 1, 5_000, 'the first cursor');
      const before = stored.length;
      const event = hs.injectMessage(room, person(1), 'keep me');
      const failed = await first;
      assert.match(String(failed), /refused the write/);
      assert.equal(stored.length, before, 'the cursor did not move past the uncommitted message');

      const second = syncer.connect(link() as never).catch((err: Error) => err);
      await waitFor(() => emitted.length >= 1, 5_000, 'the message again');
      assert.equal(emitted[0]!.platformId, event);
      await waitFor(() => stored.length > before, 5_000, 'the cursor moved after the commit');
      controller.abort();
      await second;
    } finally {
      await hs.stop();
    }
  });
});

/**
 * A join that hangs (federation to a server that does not answer) does not hold the sync loop: it is given up at its
 * own timeout and logged, messages of other rooms keep coming, and the invite is answered again on a later sync.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChannelKit, InboundMessage } from '@talon/channels';
import { startMatrixFake, waitFor } from '@talon/testing';
import { matrixClient } from '../services/client.ts';
import { Rooms } from '../services/rooms.ts';
import { Syncer } from '../services/sync.ts';
import { directContext, person } from './helpers.ts';

test('a hung join is bounded and logged, the sync goes on, and the invite is joined on a later sync', async () => {
  const hs = await startMatrixFake();
  const controller = new AbortController();
  const emitted: InboundMessage[] = [];
  const warnings: Array<{ obj: Record<string, unknown>; msg?: string }> = [];
  const ctx = directContext(async (m) => (emitted.push(m), { duplicate: false }), controller.signal, {
    warn: (obj, msg) => void warnings.push({ obj: obj as Record<string, unknown>, ...(msg ? { msg } : {}) }),
  });
  const client = matrixClient(ctx, { retryAfterMs: () => undefined } as unknown as ChannelKit, hs.url, hs.token);
  const rooms = new Rooms(client, hs.userId, controller.signal);
  const stored: string[] = [];
  const cursor = { get: async () => stored.at(-1), set: async (v: string) => void stored.push(v) };
  const syncer = new Syncer(
    ctx,
    client,
    rooms,
    cursor,
    { ctx, client, rooms, displayName: () => undefined },
    {
      timeoutMs: 300,
      retryBaseMs: 200,
      retryCapMs: 1_000,
      maxAttempts: 10,
    },
  );
  const link = { ready() {}, traffic() {}, signal: controller.signal };
  const running = syncer.connect(link as never).catch((err: Error) => err);
  try {
    const open = hs.createRoom({ members: [person(1)] });
    await waitFor(() => stored.length >= 1, 5_000, 'the first sync');
    const joins = hs.holdJoins();
    const invited = hs.invite(person(2), { direct: true });
    await waitFor(() => joins.held() >= 1, 5_000, 'the join asked');
    const started = Date.now();
    hs.injectMessage(open, person(1), 'while the join hangs');
    await waitFor(() => emitted.some((m) => m.text === 'while the join hangs'), 3_000, 'a message of another room, the join still hanging');
    assert.ok(Date.now() - started < 3_000);
    await waitFor(() => warnings.some((w) => w.obj.room === invited && /not answered yet/.test(w.msg ?? '')), 3_000, 'the failed join logged');
    assert.ok(!hs.joined.includes(invited));

    joins.release();
    // A later sync (any event wakes the long poll) answers the invite again once its backoff passed.
    await new Promise((resolve) => setTimeout(resolve, 250));
    hs.injectMessage(open, person(1), 'a later sync');
    await waitFor(() => hs.joined.includes(invited), 5_000, 'the invite joined on a later sync');
  } finally {
    controller.abort();
    await running;
    await hs.stop();
  }
});

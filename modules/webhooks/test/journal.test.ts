import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openTestStore, type TestStore } from '@talon/testing';
import { HookStore } from '../services/store.ts';

const moduleDir = path.resolve(import.meta.dirname, '..');

function withJournal(fn: (store: HookStore, opened: TestStore) => Promise<void>) {
  return async () => {
    const opened = openTestStore([moduleDir]);
    try {
      const store = new HookStore(opened.store, async () => undefined);
      const now = new Date().toISOString();
      await store.insert({
        id: 'h1',
        kind: 'outbound',
        name: 'n',
        url: 'http://127.0.0.1/',
        events: '["all"]',
        secret: null,
        enabled: 1,
        disabled_reason: null,
        consecutive_failures: 0,
        created_at: now,
        updated_at: now,
      });
      await fn(store, opened);
    } finally {
      opened.close();
    }
  };
}

const enqueue = (store: HookStore, ids: string[]) => store.enqueue(ids.map((e) => ({ hook_id: 'h1', event_id: e, event: 'custom', body: '{}' })));

test(
  'the journal keeps rows that ended for the retention only; pending rows stay whatever their age',
  withJournal(async (store, { store: db }) => {
    await enqueue(store, ['old-delivered', 'old-failed', 'old-pending', 'new-delivered']);
    const now = new Date().toISOString();
    const old = new Date(Date.now() - 10 * 86_400_000).toISOString();
    const set = (status: string, at: string, id: string) =>
      db.run('UPDATE webhooks_deliveries SET status = ?, created_at = ? WHERE event_id = ?', [status, at, id]);
    await set('delivered', old, 'old-delivered');
    await set('failed', old, 'old-failed');
    await set('pending', old, 'old-pending');
    await set('delivered', now, 'new-delivered');
    assert.equal(await store.prune(new Date(Date.now() - 7 * 86_400_000)), 2);
    const left = (await db.many<{ event_id: string }>('SELECT event_id FROM webhooks_deliveries ORDER BY id')).map((r) => r.event_id);
    assert.deepEqual(left, ['old-pending', 'new-delivered']);
  }),
);

test(
  'a claim is exclusive: of two processes claiming the same due rows, each row goes to one of them',
  withJournal(async (store, opened) => {
    await enqueue(
      store,
      Array.from({ length: 20 }, (_, i) => `e${i}`),
    );
    // A second connection on the same file: another process. (One after the other: in one thread, a transaction
    // waiting for the other connection's write lock would block the thread that holds it.)
    const other = openTestStore([], opened.file);
    try {
      const second = new HookStore(other.store, async () => undefined);
      const now = Date.now();
      const a = await store.claim('node-a', now, 15, 6000);
      const b = await second.claim('node-b', now, 15, 6000);
      const ids = [...a, ...b].map((r) => r.id);
      assert.equal(ids.length, 20, 'every due row was claimed');
      assert.equal(new Set(ids).size, 20, 'no row was claimed twice');
      assert.ok(a.every((r) => r.status === 'sending' && r.node === 'node-a' && r.lease_until === now + 6000));
      assert.deepEqual(await store.claim('node-c', now, 15, 6000), [], 'nothing is left to claim');
      const owners = await opened.store.many<{ node: string; n: number }>(
        "SELECT node, COUNT(*) AS n FROM webhooks_deliveries WHERE status = 'sending' GROUP BY node ORDER BY node",
      );
      assert.deepEqual(owners, [
        { node: 'node-a', n: 15 },
        { node: 'node-b', n: 5 },
      ]);
    } finally {
      other.close();
    }
  }),
);

test(
  "a dead node's claims go back to pending, and only its own; at start, claims of nodes that are not live do",
  withJournal(async (store, { store: db }) => {
    await enqueue(store, ['a1', 'a2', 'b1', 'c1']);
    const now = Date.now();
    await store.claim('node-a', now, 2, 6000);
    await store.claim('node-b', now, 1, 6000);
    await store.claim('node-c', now, 1, 6000);
    const states = async () =>
      Object.fromEntries(
        (await db.many<{ event_id: string; status: string; node: string | null }>('SELECT event_id, status, node FROM webhooks_deliveries')).map((r) => [
          r.event_id,
          `${r.status}:${r.node ?? '-'}`,
        ]),
      );
    assert.equal(await store.release('node-a'), 2);
    assert.deepEqual(await states(), { a1: 'pending:-', a2: 'pending:-', b1: 'sending:node-b', c1: 'sending:node-c' });
    assert.equal(await store.releaseAllBut(['node-b', 'node-x']), 1);
    assert.deepEqual(await states(), { a1: 'pending:-', a2: 'pending:-', b1: 'sending:node-b', c1: 'pending:-' });
    // A result recorded by a node that no longer holds the claim changes nothing.
    await store.delivered((await db.one<{ id: number }>("SELECT id FROM webhooks_deliveries WHERE event_id = 'c1'"))!.id, 'node-c', 'h1', 200);
    assert.equal((await states()).c1, 'pending:-');
  }),
);

test(
  "at start, backoffs set by nodes that are gone (or by none) end; a live node's backoff stays",
  withJournal(async (store, { store: db }) => {
    await enqueue(store, ['live', 'gone', 'none']);
    const now = Date.now();
    const later = now + 3_600_000;
    const id = async (e: string) => (await db.one<{ id: number }>('SELECT id FROM webhooks_deliveries WHERE event_id = ?', [e]))!.id;
    await store.claim('node-live', now, 1, 6000);
    await store.claim('node-gone', now, 1, 6000);
    await store.attemptFailed(await id('live'), 'node-live', 'h1', 'HTTP 500', 500, later);
    await store.attemptFailed(await id('gone'), 'node-gone', 'h1', 'HTTP 500', 500, later);
    await db.run('UPDATE webhooks_deliveries SET next_attempt_at = ? WHERE event_id = ?', [later, 'none']);
    await store.resumeAll(['node-live', 'node-new']);
    const due = Object.fromEntries(
      (await db.many<{ event_id: string; next_attempt_at: number }>('SELECT event_id, next_attempt_at FROM webhooks_deliveries')).map((r) => [
        r.event_id,
        r.next_attempt_at <= Date.now() ? 'now' : 'later',
      ]),
    );
    assert.deepEqual(due, { live: 'later', gone: 'now', none: 'now' });
  }),
);

/** The pending sign-ins in their table (on the engine TALON_TEST_DB names): single use, ten minutes, a cap. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openTestDbStore, type PostgresTestStore, type TestStore } from '@talon/testing';
import { PENDING_MS, PendingSignIns } from '../services/pending.ts';

let db: TestStore | PostgresTestStore;
let clock = 1_000_000;
const now = () => clock;
const signIn = (provider = 'test') => ({ provider, verifier: 'v'.repeat(43), nonce: 'n', redirectUri: 'http://127.0.0.1:1/api/auth/callback' });

before(async () => void (db = await openTestDbStore([path.resolve(import.meta.dirname, '..')])));
after(async () => db?.close());

test('a state is taken once: the second callback, and two at once, find nothing', async () => {
  const pending = new PendingSignIns(db.store, now);
  await pending.add('s1', signIn());
  assert.deepEqual(await pending.take('s1'), { ...signIn(), at: clock });
  assert.equal(await pending.take('s1'), undefined);
  await pending.add('s2', signIn());
  const both = await Promise.all([pending.take('s2'), pending.take('s2')]);
  assert.equal(both.filter(Boolean).length, 1, 'one of two simultaneous callbacks gets the sign-in');
});

test('after ten minutes a state is unknown, and gone', async () => {
  const pending = new PendingSignIns(db.store, now);
  await pending.add('old', signIn());
  clock += PENDING_MS + 1;
  assert.equal(await pending.take('old'), undefined);
  const left = await db.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM oidc_pending WHERE state = 'old'");
  assert.equal(left?.n, 0);
});

test('the cap: a new sign-in drops the expired ones and the oldest beyond it', async () => {
  const pending = new PendingSignIns(db.store, now, 3);
  await pending.add('expired', signIn());
  clock += PENDING_MS + 1;
  for (const state of ['a', 'b', 'c', 'd']) {
    clock += 1000;
    await pending.add(state, signIn());
  }
  const rows = await db.store.many<{ state: string }>('SELECT state FROM oidc_pending ORDER BY created_at');
  assert.deepEqual(
    rows.map((r) => r.state),
    ['b', 'c', 'd'],
  );
  assert.equal(await pending.take('a'), undefined);
  assert.equal((await pending.take('d'))?.provider, 'test');
});

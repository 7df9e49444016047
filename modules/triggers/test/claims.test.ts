/**
 * A fire is decided by the store, so that several processes fire a trigger once per cooldown and never past
 * max_fires: the cooldown stamp is one conditional upsert, the count one conditional UPDATE, in one transaction.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openPostgresTestStore, openTestStore } from '@talon/testing';
import type { Store } from '@talon/module-sdk';
import { TriggerStore } from '../services/store.ts';

const MODULE = path.resolve(import.meta.dirname, '..');
const opened: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/**
 * Two processes' stores: on SQLite each its own connection to the same database file; with TALON_TEST_DB=postgres one
 * pool on a fresh database (each statement and transaction takes a connection of its own, as another process's would).
 */
async function stores(): Promise<[Store, Store]> {
  if (process.env.TALON_TEST_DB === 'postgres') {
    const pg = await openPostgresTestStore([MODULE]);
    opened.push(pg);
    return [pg.store, pg.store];
  }
  const first = openTestStore([MODULE]);
  const second = openTestStore([], first.file);
  opened.push(first, second);
  return [first.store, second.store];
}

async function setup(extra: { max_fires?: number } = {}) {
  const [first, second] = await stores();
  const notes: string[] = [];
  const store = new TriggerStore(first, { note: async (topic, key) => void notes.push(`${topic}:${key}`) });
  const other = new TriggerStore(second, { note: async () => undefined });
  const trigger = await store.create({
    agent_id: 'a1',
    pattern: { custom: { event_type: 'ping' } },
    prompt_template: 'x',
    enabled: true,
    max_fires: extra.max_fires ?? 0,
    cooldown_secs: 60,
    session_mode: null,
    target_agent_id: null,
    workflow_id: null,
  });
  return { store, other, trigger, notes };
}

test('two fires at once for one subject within the cooldown: one fires, the other finds its stamp', async () => {
  const { store, other, trigger } = await setup();
  const now = Date.now();
  const results = await Promise.all([store.recordFire(trigger.id, 'subject', now, 60_000), other.recordFire(trigger.id, 'subject', now + 5, 60_000)]);
  assert.equal(results.filter(Boolean).length, 1);
  assert.equal((await store.get(trigger.id))?.fire_count, 1);
  // Another subject is not held; the same one is again once the cooldown has passed.
  assert.ok(await store.recordFire(trigger.id, 'other', now + 10, 60_000));
  assert.equal(await store.recordFire(trigger.id, 'subject', now + 59_000, 60_000), undefined);
  assert.ok(await store.recordFire(trigger.id, 'subject', now + 60_000, 60_000));
  assert.equal((await store.get(trigger.id))?.fire_count, 3);
});

test('two fires at once where the later time commits first: the earlier one finds its stamp and fires nothing', async () => {
  const { store, other, trigger } = await setup();
  const now = Date.now();
  assert.ok(await other.recordFire(trigger.id, 'subject', now + 5, 60_000));
  assert.equal(await store.recordFire(trigger.id, 'subject', now, 60_000), undefined);
  assert.equal((await store.get(trigger.id))?.fire_count, 1);
});

test('a stamp further in the future than the cooldown (the clock went back) does not hold the trigger', async () => {
  const { store, trigger } = await setup();
  const now = Date.now();
  assert.ok(await store.recordFire(trigger.id, 's', now, 60_000));
  assert.ok(await store.recordFire(trigger.id, 's', now - 3_600_000, 60_000));
});

test('max_fires holds across processes: the fire that reaches it disables the trigger, later ones fire nothing', async () => {
  const { store, other, trigger } = await setup({ max_fires: 1 });
  const now = Date.now();
  const results = await Promise.all([store.recordFire(trigger.id, 'a', now, 0), other.recordFire(trigger.id, 'b', now, 0)]);
  assert.equal(results.filter(Boolean).length, 1);
  const stored = await store.get(trigger.id);
  assert.equal(stored?.fire_count, 1);
  assert.equal(stored?.enabled, false);
  // The refused fire left no stamp behind (its transaction was rolled back).
  assert.equal((await store.cooldowns()).length, 1);
});

test('every write notes the trigger for the other processes', async () => {
  const { store, trigger, notes } = await setup();
  await store.recordFire(trigger.id, 's', Date.now(), 0);
  await store.update(trigger.id, { ...trigger, enabled: false }, false);
  await store.delete(trigger.id);
  assert.deepEqual(notes, Array(4).fill(`triggers:${trigger.id}`));
});

/**
 * A fire's commit (count, cooldown stamp) also records its pending turn; the turn's delivery row removes it. If the
 * process dies in between, another process (or the next start) records the turn as lost: a used-up cooldown is
 * never silent.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pino from 'pino';
import { openTestStore, type TestStore } from '@talon/testing';
import { DeliveryLog } from '../services/deliveries.ts';
import { TriggerStore } from '../services/store.ts';

const MODULE = path.resolve(import.meta.dirname, '..');
const opened: TestStore[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

const logOn = (s: TestStore) =>
  new DeliveryLog({ store: s.store, log: pino({ level: 'silent' }), agents: () => undefined, homeChannel: async () => undefined, kept: () => 100 });

test('a fire whose process died before its turn reported is recorded as a lost delivery, once; a reported one is not', async () => {
  const first = openTestStore([MODULE]);
  const second = openTestStore([], first.file);
  opened.push(first, second);
  const store = new TriggerStore(first.store, { note: async () => undefined });
  const trigger = await store.create({
    agent_id: 'a1',
    pattern: { custom: { event_type: 'ping' } },
    prompt_template: 'x',
    enabled: true,
    max_fires: 0,
    cooldown_secs: 60,
    session_mode: null,
    target_agent_id: null,
    workflow_id: null,
  });
  const now = Date.now();
  const pending = (id: string) => ({ id, agentId: 'a1', node: 'node-a', cause: `custom ${id}` });
  // Two fires on node-a; the turn of 'reported' delivers, the one of 'dropped' never does (node-a dies).
  assert.ok(await store.recordFire(trigger.id, 's1', now, 60_000, pending('reported')));
  assert.ok(await store.recordFire(trigger.id, 's2', now, 60_000, pending('dropped')));
  // A fire the cooldown holds records nothing.
  assert.equal(await store.recordFire(trigger.id, 's1', now + 1, 60_000, pending('held')), undefined);
  await logOn(first).deliver({ agentId: 'a1', source: 'trigger', sourceId: trigger.id, response: 'done', cause: 'custom reported' }, 'reported');

  // Another process: node-a is not live.
  const other = logOn(second);
  assert.equal(await other.loseFiresAllBut(['node-b']), 1);
  assert.equal(await other.loseFiresOf('node-a'), 0, 'recorded once');
  const { deliveries } = await other.list('a1', 10, 0);
  assert.deepEqual(
    deliveries.map((d) => [d.status, d.cause]),
    [
      ['failed', 'custom dropped'],
      ['kept', 'custom reported'],
    ],
  );
  assert.match(deliveries[0].error ?? '', /^lost: /);
  assert.equal(deliveries[0].source_id, trigger.id);
});

test("a live node's pending fires are left alone", async () => {
  const s = openTestStore([MODULE]);
  opened.push(s);
  const store = new TriggerStore(s.store, { note: async () => undefined });
  const trigger = await store.create({
    agent_id: 'a1',
    pattern: { custom: { event_type: 'ping' } },
    prompt_template: 'x',
    enabled: true,
    max_fires: 0,
    cooldown_secs: 0,
    session_mode: null,
    target_agent_id: null,
    workflow_id: null,
  });
  assert.ok(await store.recordFire(trigger.id, 's', Date.now(), 0, { id: 'f', agentId: 'a1', node: 'node-a', cause: 'c' }));
  assert.equal(await logOn(s).loseFiresAllBut(['node-a']), 0);
  assert.equal(await logOn(s).loseFiresOf('node-b'), 0);
  assert.equal(await logOn(s).loseFiresOf('node-a'), 1);
});

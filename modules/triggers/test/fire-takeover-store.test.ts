/**
 * The pending-fire rows behind a resumed turn: a gone node's fires are taken over by one process only, a live node's
 * are left alone, and the process that fired a turn records its delivery only while the fire is still its own.
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

async function triggerOn(s: TestStore, cooldownSecs: number): Promise<{ store: TriggerStore; id: string }> {
  const store = new TriggerStore(s.store, { note: async () => undefined });
  const trigger = await store.create({
    agent_id: 'a1',
    pattern: { custom: { event_type: 'ping' } },
    prompt_template: 'x {{event}}',
    enabled: true,
    max_fires: 0,
    cooldown_secs: cooldownSecs,
    session_mode: null,
    target_agent_id: null,
    workflow_id: null,
  });
  return { store, id: trigger.id };
}

const pending = (id: string, node = 'node-a') => ({ id, agentId: 'a1', node, cause: `custom ${id}`, prompt: `x custom ${id}`, depth: 2 });

test("a gone node's unreported fires are taken over once, with what resuming them needs; a reported one is not", async () => {
  const first = openTestStore([MODULE]);
  const second = openTestStore([], first.file);
  opened.push(first, second);
  const { store, id } = await triggerOn(first, 60);
  const now = Date.now();
  assert.ok(await store.recordFire(id, 's1', now, 60_000, pending('reported')));
  assert.ok(await store.recordFire(id, 's2', now, 60_000, pending('dropped')));
  // A fire the cooldown holds records nothing.
  assert.equal(await store.recordFire(id, 's1', now + 1, 60_000, pending('held')), undefined);
  assert.ok(await logOn(first).deliverFire({ agentId: 'a1', source: 'trigger', sourceId: id, response: 'done' }, { id: 'reported', node: 'node-a' }));

  // Two other processes: node-a is not live.
  assert.deepEqual(await logOn(second).takeFiresAllBut(['node-b', 'node-c'], 'node-b'), [
    { id: 'dropped', trigger_id: id, agent_id: 'a1', cause: 'custom dropped', prompt: 'x custom dropped', depth: 2 },
  ]);
  assert.deepEqual(await logOn(first).takeFiresOf('node-a', 'node-c'), [], 'taken once');
});

test('a fire taken over from its process is delivered by the one that took it, not by the one found dead', async () => {
  const s = openTestStore([MODULE]);
  opened.push(s);
  const { store, id } = await triggerOn(s, 0);
  assert.ok(await store.recordFire(id, 's', Date.now(), 0, pending('f')));
  const log = logOn(s);
  assert.equal((await log.takeFiresOf('node-a', 'node-b')).length, 1);
  const request = { agentId: 'a1', source: 'trigger' as const, sourceId: id, response: 'late' };
  assert.equal(await log.deliverFire(request, { id: 'f', node: 'node-a' }), undefined);
  assert.equal((await log.list('a1', 10, 0)).total, 0);
  assert.equal((await log.deliverFire(request, { id: 'f', node: 'node-b' }))?.status, 'kept');
  assert.equal(await log.deliverFire(request, { id: 'f', node: 'node-b' }), undefined, 'once');
  assert.equal((await log.list('a1', 10, 0)).total, 1);
});

test("a live node's pending fires are left alone", async () => {
  const s = openTestStore([MODULE]);
  opened.push(s);
  const { store, id } = await triggerOn(s, 0);
  assert.ok(await store.recordFire(id, 's', Date.now(), 0, pending('f')));
  assert.deepEqual(await logOn(s).takeFiresAllBut(['node-a'], 'node-a'), []);
  assert.deepEqual(await logOn(s).takeFiresOf('node-b', 'node-a'), []);
  assert.equal((await logOn(s).takeFiresOf('node-a', 'node-b')).length, 1);
});

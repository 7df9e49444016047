/**
 * Hands with several processes on one home: definitions, instances and settings changed by one process are what the
 * other serves; one live instance per hand holds across processes; event counts of every process add up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChangeFeed } from '@talon/module-sdk';
import type { HandInstance } from '@talon/hands';
import { openTestDbStore, startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { InstanceStore } from '../services/instances.ts';
import { activate, install, json } from './helpers.ts';

const moduleDir = path.resolve(import.meta.dirname, '..');
const noFeed: ChangeFeed = { note: async () => undefined, on: () => undefined };
const failOnLoss = (err: unknown) => assert.fail(`counts lost: ${String(err)}`);

function instance(id: string, status: string): HandInstance {
  const now = new Date().toISOString();
  return {
    id,
    hand_id: 'duo',
    status,
    agents: {},
    jobs: [],
    triggers: [],
    degraded: false,
    events_processed: 0,
    errors: 0,
    last_error: null,
    activated_at: now,
    updated_at: now,
  };
}

test('one live instance per hand is checked in the write; counts of two processes add up', async () => {
  // TALON_TEST_DB=postgres: both copies on one PostgreSQL database, their statements side by side on its pool.
  const opened = await openTestDbStore([moduleDir]);
  try {
    const here = new InstanceStore(opened.store, noFeed, failOnLoss);
    const there = new InstanceStore(opened.store, noFeed, failOnLoss);
    await here.save(instance('first', 'Active'), { exclusive: true });
    // `there` has not read the first instance yet: the write itself refuses a second live one.
    await assert.rejects(there.save(instance('second', 'Active'), { exclusive: true }), (err: Error & { statusCode?: number }) => err.statusCode === 409);
    await there.save(instance('failed', 'Error: boom'), { exclusive: true });

    await there.load();
    here.count('first', undefined);
    here.count('first', 'it broke');
    there.count('first', undefined);
    await here.flush();
    assert.deepEqual(await there.counters('first'), { events_processed: 3, errors: 1, last_error: 'it broke' }, 'the counts of both add up');
    // A save (a pause) keeps the stored counters.
    await there.save({ ...there.get('first')!, status: 'Paused', events_processed: 0, errors: 0 });
    assert.deepEqual(await here.counters('first'), { events_processed: 3, errors: 1, last_error: 'it broke' });
  } finally {
    await opened.close();
  }
});

test('two processes activating one hand at the same moment: one instance is saved, the other is a 409', async () => {
  const opened = await openTestDbStore([moduleDir]);
  try {
    for (let round = 0; round < 5; round++) {
      const copies = [0, 1, 2].map(() => new InstanceStore(opened.store, noFeed, failOnLoss));
      const saved = await Promise.allSettled(
        copies.map((c, i) => c.save({ ...instance(`r${round}-${i}`, 'Active'), hand_id: `hand-${round}` }, { exclusive: true })),
      );
      assert.equal(saved.filter((s) => s.status === 'fulfilled').length, 1, `round ${round}: one live instance`);
      const live = await opened.store.many('SELECT id FROM hands_instances WHERE hand_id = ?', [`hand-${round}`]);
      assert.equal(live.length, 1);
    }
  } finally {
    await opened.close();
  }
});

const duo = `id = "duo"
version = "1.0.0"
name = "Duo"
description = "A hand for two processes"
category = "development"

[[settings]]
key = "tone"
label = "Tone"
setting_type = "select"
default = "plain"
[[settings.options]]
value = "plain"
label = "Plain"
[[settings.options]]
value = "formal"
label = "Formal"

[agents.lead]
coordinator = true
description = "Leads"
system_prompt = "You lead."
`;

test('a hand installed, activated, configured and deactivated in one process is seen so in the other', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-hands-two-'));
  const options = { only: ['hands', 'agents', 'prompt-guard', 'error-envelope'], home, feedPollMs: 50 };
  const [a, b] = await Promise.all([startTestKernel(options), startTestKernel(options)]);
  const active = async (k: TestKernel) =>
    (await json<{ instances: Array<{ instance_id: string; status: string }> }>(await k.request('/api/hands/active'))).instances;
  try {
    assert.equal((await install(a, duo)).status, 201);
    await waitFor(async () => (await b.request('/api/hands/duo')).status === 200, 5000, 'the installed hand in the other process');

    const started = await json<{ instance_id: string }>(await activate(a, 'duo'));
    await waitFor(async () => (await active(b)).some((i) => i.instance_id === started.instance_id && i.status === 'Active'), 5000, 'the instance');
    assert.equal((await activate(b, 'duo')).status, 409, 'the hand already has a live instance (activated by the other process)');

    assert.equal((await b.request('/api/hands/duo/settings', { method: 'PUT', json: { tone: 'formal' } })).status, 200);
    await waitFor(
      async () => (await json<{ current_values: Record<string, string> }>(await a.request('/api/hands/duo/settings'))).current_values.tone === 'formal',
      5000,
      'the setting in the other process',
    );

    assert.equal((await b.request(`/api/hands/instances/${started.instance_id}`, { method: 'DELETE' })).status, 200);
    await waitFor(async () => (await active(a)).length === 0, 5000, 'the deactivation in the other process');
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    rmSync(home, { recursive: true, force: true });
  }
});

/** The engine's start: a change noted by another process while the load reads is not lost. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../services/engine.ts';
import type { Trigger } from '../services/store.ts';
import { loadAndFollow } from '../services/sync.ts';

const trigger = (id: string): Trigger => ({
  id,
  agent_id: 'a',
  pattern: { custom: { event_type: 'x' } },
  prompt_template: 'x',
  enabled: true,
  fire_count: 0,
  max_fires: 0,
  created_at: '',
  cooldown_secs: 0,
  session_mode: null,
  target_agent_id: null,
  workflow_id: null,
  last_fired_at: null,
  updated_at: '',
});

test('a note that arrives while the start-up load reads is applied, after the load (not undone by it)', { timeout: 5000 }, async () => {
  const engine = new Engine({ defaultCooldownSecs: () => 0, maxPerEvent: () => 10, agentName: () => undefined });
  const rows = new Map([['old', trigger('old')]]);
  const handlers: Array<(key: string) => unknown> = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reading!: () => void;
  const readStarted = new Promise<void>((resolve) => (reading = resolve));
  const store = {
    // The load reads the rows as they are now, then waits: another process changes them meanwhile.
    async all() {
      const snapshot = [...rows.values()];
      reading();
      await gate;
      return snapshot;
    },
    async cooldowns() {
      return [];
    },
  };
  const follow = async (id: string) => engine.follow(id, rows.get(id));
  const started = loadAndFollow({ engine, store, changes: { on: (_topic, h) => void handlers.push(h) }, follow });

  await readStarted;
  rows.set('new', trigger('new'));
  // The feed calls the handlers registered now (as the kernel's does at a poll); their calls are awaited below.
  const heard = handlers.map((h) => h('new'));
  release();
  await started;
  await Promise.all(heard);
  assert.equal(engine.size, 2, 'the trigger created during the load is in the engine');
});

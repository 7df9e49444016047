/** The engine on its own: one trigger that throws while matching never keeps the others from firing. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../services/engine.ts';
import type { Trigger } from '../services/store.ts';
import type { KnownEvent } from '../services/known.ts';

const trigger = (id: string, agent: string): Trigger => ({
  id,
  agent_id: agent,
  pattern: { task_posted: { assignee_match: 'self' } },
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

test('a trigger that throws while matching is reported and skipped; the others still match', () => {
  const errors: string[] = [];
  const engine = new Engine({
    defaultCooldownSecs: () => 0,
    maxPerEvent: () => 10,
    agentName: (id) => {
      if (id === 'broken') throw new Error('lookup failed');
      return id === 'good' ? 'good-agent' : undefined;
    },
    onMatchError: (t, err) => void errors.push(`${t.id}: ${(err as Error).message}`),
  });
  engine.load([trigger('t-broken', 'broken'), trigger('t-good', 'good')], []);
  const event = { id: 'e', type: 'task.posted', data: { taskId: 'task', title: 't', assignedTo: 'good-agent' }, at: '', source: 'test' } as KnownEvent;
  assert.deepEqual(
    engine.match(event).map((m) => m.trigger.id),
    ['t-good'],
  );
  assert.deepEqual(errors, ['t-broken: lookup failed']);
});

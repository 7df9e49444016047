import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TalonEvent } from '@talon/module-sdk';
import { eventName, nameOf } from '../services/events.ts';

const event = (type: string, data: unknown): TalonEvent => ({ id: 'e', type, data, at: new Date().toISOString(), source: 'test' });

test('bus events get the webhook names the docs list', () => {
  assert.equal(
    nameOf(event('turn.completed', { agentId: 'a', sessionId: 's', turnId: 't', response: 'r', inputTokens: 1, outputTokens: 1, costUsd: 0 })),
    'message_completed',
  );
  const run = (status: string) => event('workflow.run_finished', { workflowId: 'w', workflowName: 'n', runId: 'r', status });
  assert.equal(nameOf(run('completed')), 'workflow_completed');
  assert.equal(nameOf(run('failed')), 'workflow_failed');
  assert.equal(nameOf(run('cancelled')), 'workflow_failed');
  assert.equal(nameOf(event('schedule.fired', { jobId: 'j', name: 'n', status: 'ok' })), 'schedule_fired');
  assert.equal(nameOf(event('approval.resolved', { approvalId: 'x', status: 'approved' })), 'approval_resolved');
  assert.equal(nameOf(event('agent.terminated', { agentId: 'a', name: 'n' })), 'agent_terminated');
});

test('subscription names: snake_case, dotted spellings and the aliases; unknown names are undefined', () => {
  assert.equal(eventName('agent.spawned'), 'agent_spawned');
  assert.equal(eventName(' Message_Completed '), 'message_completed');
  assert.equal(eventName('cron_fired'), 'schedule_fired');
  assert.equal(eventName('approval.decided'), 'approval_resolved');
  assert.equal(eventName('agent_error'), 'agent_crashed');
  assert.equal(eventName('no_such_event'), undefined);
});

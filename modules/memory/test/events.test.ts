import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TalonEvent } from '@talon/module-sdk';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

let k: TestKernel;
const events: TalonEvent[] = [];
const agentId = '11111111-1111-4111-8111-111111111111';

before(async () => {
  k = await startTestKernel({ only: ['memory', 'error-envelope'] });
  const scope = k.kernel.events.scope('test');
  scope.subscribe(['memory.updated'], (e) => void events.push(e));
  scope.commit();
});
after(() => k.stop());

test('memory.updated is published after a key is set or deleted and after an entry is remembered or forgotten', async () => {
  await k.request(`/api/memory/agents/${agentId}/kv/pref.color`, { method: 'PUT', json: { value: 'blue' } });
  await k.request(`/api/memory/agents/${agentId}/kv/pref.color`, { method: 'DELETE' });
  await k.request(`/api/memory/agents/${agentId}/kv/pref.color`, { method: 'DELETE' });
  const res = await k.request('/api/memory', { method: 'POST', json: { content: 'Likes hiking', agent_id: agentId } });
  const { id } = (await res.json()) as { id: string };
  await k.request(`/api/memory/items/${id}`, { method: 'DELETE' });
  await waitFor(() => events.length >= 4, 2000, 'four events');
  assert.deepEqual(
    events.map((e) => e.data),
    [
      { agentId, operation: 'set', key: 'pref.color' },
      { agentId, operation: 'delete', key: 'pref.color' },
      { agentId, operation: 'remember', memoryId: id },
      { agentId, operation: 'forget', memoryId: id },
    ],
    'a delete of a missing key publishes nothing',
  );
  assert.ok(events.every((e) => e.source === 'memory'));
});

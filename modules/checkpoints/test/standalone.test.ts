/** Without the agents module (an optional dependency) checkpoints still runs: no snapshots, but listing and restore answer. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestKernel, type TestKernel } from '@talon/testing';

let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['checkpoints', 'error-envelope'] });
});
after(() => k?.stop());

test('checkpoints runs alone; its endpoints answer', async () => {
  assert.equal(k.kernel.modules().find((m) => m.id === 'checkpoints')?.state, 'running');
  assert.equal(k.kernel.modules().find((m) => m.id === 'agents')?.state, 'disabled');
  const listed = await k.request(`/api/checkpoints?working_dir=${encodeURIComponent('/no/such/project')}`);
  assert.equal(listed.status, 404);
  assert.match(((await listed.json()) as { error: string }).error, /no checkpoints for working directory/);
  const restored = await k.request('/api/checkpoints/restore', { method: 'POST', json: { working_dir: '/no/such/project', commit: 'abcdef1' } });
  assert.equal(restored.status, 404);
});

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';

let k: TestKernel | undefined;
after(() => k?.stop());

test('POST /api/shutdown answers, then the kernel stops', async () => {
  k = await startTestKernel({ only: ['system', 'auth'], config: 'api_key = "test-key-0123456789"\n' });
  assert.equal((await k.request('/api/shutdown', { method: 'POST' })).status, 401);
  const res = await k.request('/api/shutdown', { method: 'POST', headers: { authorization: 'Bearer test-key-0123456789' } });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: 'shutting_down' });
  // stop() returns the shutdown already under way.
  await k.kernel.stop();
  assert.ok(k.kernel.modules().every((m) => m.state !== 'running'));
  await assert.rejects(fetch(`${k.url}/api/health`));
});

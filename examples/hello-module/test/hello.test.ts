import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

// Loaded the way a user loads a third-party module: through module_paths.
const examples = path.resolve('examples');
let k: TestKernel;

before(async () => {
  k = await startTestKernel({ only: ['hello'], config: `module_paths = ["${examples}"]\n[hello]\ngreeting = "Hi"\n` });
});
after(() => k.stop());

test('the route answers with the configured greeting and the migration-backed count', async () => {
  const first = await k.request('/api/hello/ann');
  assert.equal(first.status, 200);
  assert.deepEqual(await first.json(), { message: 'Hi, ann!', times: 1 });
  assert.deepEqual(await (await k.request('/api/hello/ann')).json(), { message: 'Hi, ann!', times: 2 });
});

test('the module is reported as third-party and running', () => {
  const info = k.kernel.modules().find((m) => m.id === 'hello');
  assert.equal(info?.state, 'running');
  assert.equal(info?.thirdParty, true);
});

test('its hook tap is registered under its name and its migration is recorded', async () => {
  const taps = k.kernel.hooks.kernel.http.response.taps.map((t) => t.name);
  assert.ok(taps.some((n) => n.startsWith('hello#') && n.endsWith(':count')));
  const row = await k.kernel.store.one("SELECT id FROM kernel_migrations WHERE module = 'hello'");
  assert.deepEqual(row, { id: '0001_greetings' });
});

test('a bad path parameter is refused by the schema', async () => {
  const res = await k.request(`/api/hello/${'x'.repeat(80)}`);
  assert.equal(res.status, 400);
});

test('a bad value in its config section stops start-up, naming the key', async () => {
  // Stopped if it starts after all, so a failing check does not leave a kernel keeping the process alive.
  await assert.rejects(
    startTestKernel({ only: ['hello'], config: `module_paths = ["${examples}"]\n[hello]\ngreeting = ""\n` }).then((started) => started.stop()),
    /'hello.greeting'/,
  );
});

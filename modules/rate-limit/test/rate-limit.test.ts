import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

const kernels: TestKernel[] = [];
after(async () => {
  await Promise.all(kernels.map((k) => k.stop()));
});

test('exhausting the budget gives 429 with Retry-After, then the budget comes back (loopback is not exempt)', async () => {
  // 1 unit/s: a 60-unit burst, and one GET back every second.
  const k = await startTestKernel({ only: ['rate-limit', 'request-id', 'system', 'error-envelope'], config: 'rate_limit_per_second = 1\n' });
  kernels.push(k);
  let refused: Response | undefined;
  let passed = 0;
  for (let i = 0; i < 200 && !refused; i++) {
    const res = await k.request('/api/health');
    if (res.status === 429) refused = res;
    else {
      assert.equal(res.status, 200);
      passed++;
    }
  }
  assert.ok(refused, 'no 429 after 200 requests');
  assert.ok(passed >= 60 && passed < 70, `passed ${passed}`);
  assert.deepEqual(await refused.json(), { error: 'Rate limit exceeded' });
  assert.equal(refused.headers.get('retry-after'), '1');
  assert.match(refused.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  // 404s are charged too (scanning is not free), and refused like the rest.
  assert.equal((await k.request('/no/such/route')).status, 429);
  const back = await waitFor(
    async () => {
      const res = await k.request('/api/health');
      return res.status === 200 ? res : undefined;
    },
    5000,
    'the budget back',
  );
  assert.equal(back.status, 200);
});

test('writes cost more than reads: a 5-unit POST is refused while a 1-unit GET still passes', async () => {
  // 0.1 unit/s: a 6-unit burst.
  const k = await startTestKernel({ only: ['rate-limit', 'system', 'error-envelope'], config: 'rate_limit_per_second = 0.1\n' });
  kernels.push(k);
  assert.equal((await k.request('/api/shutdown-not-here', { method: 'POST' })).status, 404); // 5 units
  const post = await k.request('/api/shutdown-not-here', { method: 'POST' });
  assert.equal(post.status, 429);
  assert.ok(Number(post.headers.get('retry-after')) >= 30, post.headers.get('retry-after') ?? '');
  assert.equal((await k.request('/api/health')).status, 200); // 1 unit fits
  assert.equal((await k.request('/api/health')).status, 429);
});

test("a route's config.rateCost overrides the default cost", async () => {
  // 0.1 unit/s: a 6-unit burst, spent by one request of cost 6.
  const k = await startTestKernel({
    only: ['rate-limit', 'system', 'rate-probe'],
    config: `rate_limit_per_second = 0.1\nmodule_paths = [${JSON.stringify(fixtures)}]\n`,
  });
  kernels.push(k);
  assert.equal((await k.request('/probe/expensive')).status, 200);
  const refused = await k.request('/api/health');
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '10');
});

test('the price of dear work is set on its route (a spawn 50, a schedule run 100); a path alone prices nothing', async () => {
  // 1 unit/s: a 60-unit burst. 0.5 unit/s: a 30-unit burst, which a run (dearer than the burst) spends whole.
  const [agents, runs] = await Promise.all([
    startTestKernel({ only: ['rate-limit', 'agents', 'error-envelope'], config: 'rate_limit_per_second = 1\n' }),
    startTestKernel({ only: ['rate-limit', 'scheduler', 'error-envelope'], config: 'rate_limit_per_second = 0.5\n' }),
  ]);
  kernels.push(agents, runs);
  const spawn = () => agents.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "dear"\n' } });
  assert.notEqual((await spawn()).status, 429); // 50 units
  // A path the limiter once priced by its shape (a run segment: 100), with no route behind it: a plain write, 5.
  assert.equal((await agents.request('/api/nothing-here/run', { method: 'POST' })).status, 404);
  assert.equal((await spawn()).status, 429, 'a second spawn does not fit in the 5 units left');

  assert.notEqual((await runs.request('/api/schedules/nope/run', { method: 'POST' })).status, 429);
  assert.equal((await runs.request('/api/schedules', { method: 'POST', json: {} })).status, 429, 'the run spent the whole burst');
});

test("the reference's [rate_limit] api_requests_per_minute sets the rate", async () => {
  // 6 requests a minute = 0.1 unit/s: a 6-unit burst (the default rate would allow 600).
  const k = await startTestKernel({ only: ['rate-limit', 'system'], config: '[rate_limit]\napi_requests_per_minute = 6\n' });
  kernels.push(k);
  for (let i = 0; i < 6; i++) assert.equal((await k.request('/api/health')).status, 200, `request ${i}`);
  const refused = await k.request('/api/health');
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '10');
});

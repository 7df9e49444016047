/** Two processes on one home: a device paired on one is known to the other within a second, and so is its removal. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const API_KEY = 'admin-key-for-pairing-tests-1';
const admin = { authorization: `Bearer ${API_KEY}` };
const home = mkdtempSync(path.join(tmpdir(), 'talon-pairing-two-'));
const options = {
  only: ['pairing', 'auth', 'error-envelope'],
  home,
  config: `api_key = "${API_KEY}"\n[pairing]\nenabled = true\n`,
  heartbeatMs: 200,
  feedPollMs: 50,
};
let a: TestKernel;
let b: TestKernel;

before(async () => {
  a = await startTestKernel(options);
  b = await startTestKernel(options);
});
after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  rmSync(home, { recursive: true, force: true });
});

test('a device paired on one process is accepted by the other within a second; removed on the other, refused by the first', async () => {
  const code = (await (await a.request('/api/pairing/request', { method: 'POST', headers: admin })).json()) as { pairing_code: string };
  const completed = await a.request('/api/pairing/complete', { method: 'POST', json: { pairing_code: code.pairing_code, display_name: 'p', platform: 'ios' } });
  const device = (await completed.json()) as { device_id: string; token: string };
  // The pairing routes are for administrators: a recognised device gets 403, an unknown token 401.
  const asDevice = async (k: TestKernel) => (await k.request('/api/pairing/devices', { headers: { authorization: `Bearer ${device.token}` } })).status;
  assert.equal(await asDevice(a), 403);
  await waitFor(async () => (await asDevice(b)) === 403, 1000, 'the device known to the other process');
  assert.equal((await b.request(`/api/pairing/devices/${device.device_id}`, { method: 'DELETE', headers: admin })).status, 204);
  assert.equal(await asDevice(b), 401, 'refused at once where it was removed');
  await waitFor(async () => (await asDevice(a)) === 401, 1000, 'the removal known to the first process');
});

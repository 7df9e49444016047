/**
 * Two processes of one home (on PostgreSQL, two nodes on one database): a device-flow login started on one is polled
 * on the other, which finds it (the flow is a row, not a process's memory); once finished it is gone on both.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { fakeGithub, json, type FakeGithub } from './helpers.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-device-two-'));
let a: TestKernel;
let b: TestKernel;
let github: FakeGithub;

before(async () => {
  github = await fakeGithub();
  const config = github.config;
  const options = { only: ['catalog'], home, config, heartbeatMs: 200 };
  a = await startTestKernel(options);
  b = await startTestKernel(options);
});
after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await github?.server.close();
  rmSync(home, { recursive: true, force: true });
});

const poll = async (k: TestKernel, pollId: unknown) => k.request(`/api/providers/github-copilot/oauth/poll/${String(pollId)}`);

async function startOnA(): Promise<{ poll_id: string; device_code: string }> {
  const res = await a.request('/api/providers/github-copilot/oauth/start', { method: 'POST' });
  assert.equal(res.status, 200);
  return json(res) as Promise<{ poll_id: string; device_code: string }>;
}

test('started on one process, polled pending and then authorized on the other; finished, it is unknown on both', async () => {
  const s = await startOnA();
  github.tokenReplies.set(s.device_code, { error: 'authorization_pending' });
  const pending = await poll(b, s.poll_id);
  assert.equal(pending.status, 200);
  assert.equal((await json(pending)).status, 'pending');
  github.tokenReplies.set(s.device_code, { access_token: 'gho_fromTheOtherNode0123456789', token_type: 'bearer' });
  assert.deepEqual(await json(await poll(b, s.poll_id)), { status: 'authorized', provider: 'github-copilot' });
  assert.equal((await poll(a, s.poll_id)).status, 404);
  assert.equal((await poll(b, s.poll_id)).status, 404);
});

test('denied when polled on the other process, and then unknown on the first', async () => {
  const s = await startOnA();
  github.tokenReplies.set(s.device_code, { error: 'access_denied' });
  assert.equal((await json(await poll(b, s.poll_id))).status, 'denied');
  assert.equal((await poll(a, s.poll_id)).status, 404);
});

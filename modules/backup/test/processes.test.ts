/**
 * Two kernels on one home: a restore in one while the other is live is refused (409, naming how many others run),
 * and goes through once the other has stopped.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, type TestKernel } from '@talon/testing';
import { call, start } from './env.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-backup-procs-'));
const fake = new FakeProvider();
let a: TestKernel;
let b: TestKernel | undefined;

before(async () => {
  await fake.start();
  a = await start({ fake, home });
  b = await start({ fake, home });
});
after(async () => {
  await b?.stop();
  await a?.stop();
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

test('restore is refused while another process is live on the home, and runs once it has stopped', { timeout: 30_000 }, async () => {
  const made = await call<{ filename: string }>(a, '/api/backup', { method: 'POST', json: { components: ['config'] } });
  assert.equal(made.status, 201);
  const restore = () => call<{ error?: string; status?: string }>(a, '/api/restore', { method: 'POST', json: { filename: made.body.filename } });

  const refused = await restore();
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.match(refused.body.error ?? '', /1 other process is running.*stop them first/);

  await b?.stop();
  b = undefined;
  const done = await restore();
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.equal(done.body.status, 'restored');
});

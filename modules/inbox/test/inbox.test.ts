import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['inbox', 'approvals', 'agents', 'tasks', 'error-envelope'] });
});
after(() => k?.stop());

test('inbox: pending approvals, pending tasks and drop-folder files are counted; deliveries never wait (null)', async () => {
  const empty = (await (await k.request('/api/inbox/status')).json()) as { pending_total: number; sources: Record<string, number | null> };
  assert.deepEqual(empty.sources, { approvals: 0, tasks: 0, deliveries: null, drop_folder: 0 });
  const spawned = await k.request('/api/agents', {
    method: 'POST',
    json: { manifest_toml: 'name = "asker"\n[model]\nprovider = "default"\nmodel = "default"\n' },
  });
  const { agent_id } = (await spawned.json()) as { agent_id: string };
  const made = await k.request('/api/approvals', { method: 'POST', json: { agent_id, action: 'shell_exec', description: 'rm', payload: {} } });
  assert.equal(made.status, 201, await made.clone().text());
  for (const title of ['sort the mail', 'file the report']) assert.equal((await k.request('/api/tasks', { method: 'POST', json: { title } })).status, 201);
  mkdirSync(path.join(k.home, 'inbox', 'processed'), { recursive: true });
  writeFileSync(path.join(k.home, 'inbox', 'a.txt'), 'x');
  writeFileSync(path.join(k.home, 'inbox', 'processed', 'b.txt'), 'x');
  const res = await k.request('/api/inbox/status');
  assert.equal(res.status, 200);
  const body = (await res.json()) as {
    pending_total: number;
    sources: Record<string, number | null>;
    drop_folder: { pending_count: number; processed_count: number };
  };
  assert.equal(body.sources.approvals, 1);
  assert.equal(body.sources.tasks, 2);
  assert.equal(body.sources.drop_folder, 1);
  assert.equal(body.drop_folder.processed_count, 1);
  assert.equal(body.pending_total, 4);
});

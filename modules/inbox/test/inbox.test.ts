import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

const fixtures = path.join(import.meta.dirname, 'fixtures');

let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['inbox', 'approvals', 'agents', 'tasks', 'error-envelope'] });
});
after(() => k?.stop());

test('inbox: pending approvals, pending tasks and drop-folder files are counted', async () => {
  const empty = (await (await k.request('/api/inbox/status')).json()) as { pending_total: number; sources: Record<string, number | null> };
  assert.deepEqual(empty.sources, { approvals: 0, tasks: 0, drop_folder: 0 });
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

test('a module the inbox does not know taps inboxHooks.sources: its count is listed; a source not running is absent', async () => {
  const config = `module_paths = [${JSON.stringify(fixtures)}]\n`;
  const [on, off] = await Promise.all([
    startTestKernel({ only: ['inbox', 'mail-probe', 'broken-probe'], config }),
    startTestKernel({ only: ['inbox'], config }),
  ]);
  try {
    const a = (await (await on.request('/api/inbox/status')).json()) as { pending_total: number; sources: Record<string, number | null> };
    // A failing count is null; a source may not take the drop folder's name.
    assert.deepEqual(a.sources, { unread_mail: 3, flaky: null, drop_folder: 0 });
    assert.equal(a.pending_total, 3);
    assert.equal(off.kernel.modules().find((m) => m.id === 'mail-probe')?.state, 'disabled');
    const b = (await (await off.request('/api/inbox/status')).json()) as { sources: Record<string, number | null> };
    assert.deepEqual(b.sources, { drop_folder: 0 });
  } finally {
    await Promise.all([on.stop(), off.stop()]);
  }
});

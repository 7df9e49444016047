/** MCP servers with several processes on one home: each connects to every stored server and follows the others' changes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChangeFeed } from '@talon/module-sdk';
import { openTestDbStore, startTestKernel, waitFor } from '@talon/testing';
import type { SecretVault } from '@talon/secrets';
import { ServerStore } from '../services/store.ts';
import type { ServerSpec } from '../services/spec.ts';
import { addFixture, waitConnected } from './helpers.ts';

const moduleDir = path.resolve(import.meta.dirname, '..');

test('a name is checked against every stored server in the write: a process that has not heard of one yet gets 409', async () => {
  const opened = await openTestDbStore([moduleDir]);
  try {
    const plain: SecretVault = { seal: (text) => text, open: (text) => text };
    const notes: string[] = [];
    const feed: ChangeFeed = { note: async (topic, key = '') => void notes.push(`${topic}:${key}`), on: () => undefined };
    const [here, there] = [new ServerStore(opened.store, feed, () => plain), new ServerStore(opened.store, feed, () => plain)];
    const spec = (id: string): ServerSpec => ({
      id,
      name: 'shared',
      source: 'api',
      transport: { type: 'stdio', command: 'x', args: [] },
      env: {},
      headers: {},
    });
    await here.save(spec('one'));
    await assert.rejects(
      there.save(spec('two')),
      (err: Error & { statusCode?: number }) => err.statusCode === 409 && /'shared' already exists/.test(err.message),
    );
    await there.save({ ...spec('one'), timeoutSecs: 5 });
    assert.deepEqual(
      there.list(() => undefined).map((s) => [s.id, s.timeoutSecs]),
      [['one', 5]],
    );
    assert.deepEqual(notes, ['servers:one', 'servers:one']);
  } finally {
    await opened.close();
  }
});

test('two saves of one name at once, by different processes: one is stored, the other is a 409 (not a server error)', async () => {
  const opened = await openTestDbStore([moduleDir]);
  try {
    const plain: SecretVault = { seal: (text) => text, open: (text) => text };
    const feed: ChangeFeed = { note: async () => undefined, on: () => undefined };
    const spec = (id: string): ServerSpec => ({ id, name: 'raced', source: 'api', transport: { type: 'stdio', command: 'x', args: [] }, env: {}, headers: {} });
    const results = await Promise.allSettled(['one', 'two', 'three'].map((id) => new ServerStore(opened.store, feed, () => plain).save(spec(id))));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, 'one save stored');
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as { statusCode?: number }).statusCode, 409, String(r.reason));
    assert.equal((await opened.store.many("SELECT id FROM mcp_servers WHERE name = 'raced'")).length, 1);
  } finally {
    await opened.close();
  }
});

test('a server stored by one process connects in the other; removed there, it goes here', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-mcp-two-'));
  const options = { only: ['mcp', 'auth', 'error-envelope'], home, config: '[mcp]\nreconnect_base_ms = 50', feedPollMs: 50 };
  const [a, b] = await Promise.all([startTestKernel(options), startTestKernel(options)]);
  try {
    const added = await addFixture(a, 'shared');
    const there = await waitConnected(b, 'shared');
    assert.equal(there.id, added.id);
    assert.equal((await b.request(`/api/mcp/servers/${added.id}`, { method: 'DELETE' })).status, 200);
    await waitFor(async () => (await a.request('/api/mcp/servers/shared')).status === 404, 5000, 'the removal to reach the first process');
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    rmSync(home, { recursive: true, force: true });
  }
});

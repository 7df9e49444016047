/**
 * The reads the dashboard's checkpoints view makes: an agent's checkpoints by agent_id (its workspace), and one
 * checkpoint's changes, files and diff (GET /api/checkpoints/{commit}).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startAgentTestKernel, type AgentTestKernel } from '@talon/testing';
import { parseChanges } from '../services/detail.ts';

let k: AgentTestKernel;
before(async () => {
  k = await startAgentTestKernel({ only: ['checkpoints', 'agents', 'tools', 'error-envelope'] });
});
after(() => k?.stop());

async function turn(agentId: string, toolCalls: Array<{ name: string; input: Record<string, unknown> }>): Promise<void> {
  k.fake.enqueue({ toolCalls }, { text: 'done' });
  const res = await k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'write it' } });
  assert.equal(res.status, 200, await res.clone().text());
}

async function spawn(name: string): Promise<string> {
  const manifest = `name = "${name}"\n[capabilities]\ntools = ["file_write"]\n`;
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { agent_id: string }).agent_id;
}

interface Entry {
  commit: string;
  short: string;
  tool: string;
}

test("an agent's checkpoints by agent_id; one checkpoint's changes, files and diff", async () => {
  const agentId = await spawn('differ');
  // No file written yet: no repository, and an empty list (not 404).
  const none = await k.request(`/api/checkpoints?agent_id=${agentId}`);
  assert.equal(none.status, 200);
  assert.deepEqual(await none.json(), []);

  await turn(agentId, [{ name: 'file_write', input: { path: 'plan.md', content: 'one\ntwo\n' } }]);
  await turn(agentId, [{ name: 'file_write', input: { path: 'plan.md', content: 'one\nTWO\nthree\n' } }]);
  writeFileSync(path.join(k.home, 'workspaces', agentId, 'logo.bin'), Buffer.from([0, 1, 2, 3, 0, 255]));
  await turn(agentId, [{ name: 'file_write', input: { path: 'logo.bin', content: 'text now' } }]);

  const listed = (await (await k.request(`/api/checkpoints?agent_id=${agentId}`)).json()) as Entry[];
  assert.equal(listed.length, 2);
  const byDir = (await (await k.request(`/api/checkpoints?working_dir=${encodeURIComponent(path.join(k.home, 'workspaces', agentId))}`)).json()) as Entry[];
  assert.deepEqual(
    byDir.map((e) => e.commit),
    listed.map((e) => e.commit),
    'agent_id reads the repository of its workspace',
  );

  // The newest: taken before logo.bin was written; since the one before, plan.md changed and logo.bin appeared.
  const res = await k.request(`/api/checkpoints/${listed[0].short}?agent_id=${agentId}`);
  assert.equal(res.status, 200, await res.clone().text());
  const detail = (await res.json()) as {
    commit: string;
    parent: string | null;
    working_dir: string;
    changes: Array<{ path: string; status: string; additions: number | null; deletions: number | null }>;
    files: string[];
    diff: string;
    diff_truncated: boolean;
  };
  assert.equal(detail.commit, listed[0].commit);
  assert.equal(detail.parent, listed[1].commit);
  assert.match(detail.working_dir, new RegExp(`${agentId}$`));
  assert.deepEqual(detail.changes, [
    { path: 'logo.bin', status: 'added', additions: null, deletions: null },
    { path: 'plan.md', status: 'modified', additions: 2, deletions: 1 },
  ]);
  assert.deepEqual(detail.files, ['logo.bin', 'plan.md']);
  assert.match(detail.diff, /^diff --git a\/logo.bin b\/logo.bin/m);
  assert.match(detail.diff, /^-two\n\+TWO\n\+three$/m);
  assert.equal(detail.diff_truncated, false);

  // The oldest kept one is compared with nothing: every file added.
  const first = (await (await k.request(`/api/checkpoints/${listed[1].commit}?agent_id=${agentId}`)).json()) as typeof detail;
  assert.equal(first.parent, null);
  assert.deepEqual(first.changes, [{ path: 'plan.md', status: 'added', additions: 2, deletions: 0 }]);
});

test('refusals name what is wrong', async () => {
  const agentId = await spawn('refused');
  const cases: Array<[string, number, RegExp]> = [
    ['/api/checkpoints', 400, /working_dir or agent_id/],
    [`/api/checkpoints?agent_id=${agentId}&working_dir=/tmp`, 400, /working_dir or agent_id/],
    ['/api/checkpoints?agent_id=nope', 400, /agent_id/],
    ['/api/checkpoints?agent_id=00000000-0000-4000-8000-000000000000', 404, /agent '00000000-0000-4000-8000-000000000000' not found/],
    [`/api/checkpoints/abcdef1?agent_id=${agentId}`, 404, /no checkpoints for working directory/],
    ['/api/checkpoints/--output=x?working_dir=/tmp', 400, /commit/],
    ['/api/checkpoints/abcdef1?working_dir=relative', 400, /absolute path/],
  ];
  for (const [url, status, message] of cases) {
    const res = await k.request(url);
    assert.equal(res.status, status, url);
    assert.match(((await res.json()) as { error: string }).error, message, url);
  }
});

test('parseChanges joins name-status with numstat, binary files without counts', () => {
  assert.deepEqual(parseChanges('M\0a b.txt\0D\0gone\0', '3\t1\ta b.txt\0-\t-\tgone\0'), [
    { path: 'a b.txt', status: 'modified', additions: 3, deletions: 1 },
    { path: 'gone', status: 'deleted', additions: null, deletions: null },
  ]);
});

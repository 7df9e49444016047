/** Retention: the newest max_checkpoints and those younger than max_age_days stay; older commits and their files go. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { openTestStore, waitFor } from '@talon/testing';
import { pino } from 'pino';
import { CheckpointManager } from '../services/manager.ts';
import { keptCount, type RetentionPolicy } from '../services/retention.ts';
import { locate } from '../services/shadow.ts';
import { AGENT_ID, SESSION_ID, commitCount, git, tempDir } from './support.ts';

const made: string[] = [];
const closers: Array<() => void> = [];
after(() => {
  closers.forEach((close) => close());
  made.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
});

function setup(retention: RetentionPolicy) {
  const root = tempDir('talon-ckpt-root-');
  const ws = tempDir('talon-ckpt-ws-');
  made.push(root, ws);
  const opened = openTestStore([path.join(import.meta.dirname, '..')]);
  closers.push(opened.close);
  const policy = { ...retention };
  const manager = new CheckpointManager({
    root: () => root,
    store: opened.store,
    log: pino({ level: 'silent' }),
    settings: () => ({ snapshotTimeoutMs: 10_000, maxFileBytes: 51_200, retention: policy }),
    patchPaths: () => [],
  });
  /** Writes `n` versions of a file, each after a snapshot (as file_write does); the ids of the commits made. */
  const writes = async (n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      writeFileSync(path.join(ws, `v${i}.txt`), `only in version ${i}`);
      const id = await manager.snapshot(ws, [`v${i}.txt`, 'notes.txt'], { tool: 'file_write', agentId: AGENT_ID, sessionId: SESSION_ID, paths: ['notes.txt'] });
      if (id) ids.push(id);
      writeFileSync(path.join(ws, 'notes.txt'), `version ${i}`);
    }
    return ids;
  };
  return { manager, ws, gitDir: locate(root, ws).gitDir, policy, writes };
}

/** Git's id of a file with this content. */
const blobId = (content: string) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(content)}\0${content}`)
    .digest('hex');

const exists = (gitDir: string, object: string) => {
  try {
    git(gitDir, ['cat-file', '-e', object]);
    return true;
  } catch {
    return false;
  }
};

test('keptCount: the newest max_checkpoints, then only those younger than max_age_days, never fewer than one', () => {
  const now = Date.UTC(2026, 0, 31);
  const day = 86_400;
  const newestFirst = [1, 10, 20, 30].map((daysOld) => now / 1000 - daysOld * day);
  assert.equal(keptCount(newestFirst, { maxCount: 0, maxAgeDays: 0 }, now), 4);
  assert.equal(keptCount(newestFirst, { maxCount: 2, maxAgeDays: 0 }, now), 2);
  assert.equal(keptCount(newestFirst, { maxCount: 0, maxAgeDays: 15 }, now), 2);
  assert.equal(keptCount(newestFirst, { maxCount: 1, maxAgeDays: 15 }, now), 1);
  assert.equal(keptCount(newestFirst, { maxCount: 0, maxAgeDays: 0.5 }, now), 1, 'the newest stays, however old');
});

test('max_checkpoints: older commits and the files only they held are dropped; kept ones keep their ids and restore', async () => {
  const { manager, ws, gitDir, writes } = setup({ maxCount: 3, maxAgeDays: 0 });
  const ids = await writes(7);
  assert.equal(ids.length, 7);
  await waitFor(() => commitCount(gitDir) === 3, 10_000, 'retention to run');
  const listed = await manager.list(ws, { limit: 50, offset: 0 });
  assert.deepEqual(
    listed.map((c) => c.commit),
    ids.slice(-3).reverse(),
    'the newest three, same ids',
  );
  const dropped = ids[0];
  assert.equal(exists(gitDir, dropped), false, 'the oldest commit is gone');
  assert.equal(exists(gitDir, blobId('version 0')), false, 'a file only dropped checkpoints held is gone');
  assert.equal(exists(gitDir, blobId('only in version 0')), true, 'a file the kept checkpoints still hold stays');
  await assert.rejects(manager.restore(ws, dropped), (err: { statusCode?: number }) => err.statusCode === 404);
  const oldest = listed.at(-1)!.commit;
  const restored = await manager.restore(ws, oldest);
  assert.equal(restored.commit, oldest);
  assert.equal(readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'version 3', 'the state before the fifth write');
  await manager.close();
});

test('max_age_days: the sweep drops old checkpoints of every repository, keeping the newest', async () => {
  const { manager, gitDir, policy, writes } = setup({ maxCount: 0, maxAgeDays: 0 });
  await writes(4);
  assert.equal(commitCount(gitDir), 4);
  assert.equal(await manager.sweep(), 0, 'no policy, nothing dropped');
  policy.maxAgeDays = 30;
  assert.equal(await manager.sweep(), 0, 'all younger than 30 days');
  assert.equal(await manager.sweep(Date.now() + 31 * 86_400_000), 3, 'a month later only the newest stays');
  assert.equal(commitCount(gitDir), 1);
  await manager.close();
});

/**
 * Two processes on one home share the shadow repositories: what one's snapshot does to an index (a file leaves it
 * when deleted), the other's in-memory mirror of that index must not contradict.
 */
import assert from 'node:assert/strict';
import { rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { pino } from 'pino';
import { openTestStore } from '@talon/testing';
import { CheckpointManager } from '../services/manager.ts';
import { locate } from '../services/shadow.ts';
import { AGENT_ID, SESSION_ID, git, tempDir } from './support.ts';

const root = tempDir('talon-ckpt-root-');
const ws = tempDir('talon-ckpt-ws-');
const opened = openTestStore([path.join(import.meta.dirname, '..')]);
after(() => {
  opened.close();
  for (const dir of [root, ws]) rmSync(dir, { recursive: true, force: true });
});

/** The module's copies in two processes; each one's index changes reach the other as ctx.changes would carry them. */
const managers: CheckpointManager[] = [];
const copy = (me: number) =>
  new CheckpointManager({
    root: () => root,
    store: opened.store,
    log: pino({ level: 'silent' }),
    settings: () => ({ snapshotTimeoutMs: 10_000, maxFileBytes: 51_200, retention: { maxCount: 0, maxAgeDays: 0 } }),
    patchPaths: () => [],
    indexChanged: async (gitDir) => managers.forEach((m, i) => i !== me && m.forgetIndex(gitDir)),
  });
managers.push(copy(0), copy(1));
const [a, b] = managers;
after(() => Promise.all(managers.map((m) => m.close())));

const meta = { tool: 'file_write', agentId: AGENT_ID, sessionId: SESSION_ID, paths: ['x.txt'] };

test("a file the other process's snapshot took out of the index is added again by this one's next snapshot", async () => {
  writeFileSync(path.join(ws, 'x.txt'), 'first');
  assert.ok(await a.snapshot(ws, ['x.txt'], meta), 'A tracks x.txt');
  unlinkSync(path.join(ws, 'x.txt'));
  assert.ok(await b.snapshot(ws, ['x.txt'], meta), 'B records its deletion: x.txt leaves the index');
  writeFileSync(path.join(ws, 'x.txt'), 'second');
  // A stale mirror in A would still list x.txt, so A would not add it, and its commit would miss the file.
  const commit = await a.snapshot(ws, ['x.txt'], meta);
  assert.ok(commit, 'A commits the file again');
  assert.equal(git(locate(root, ws).gitDir, ['show', `${commit}:x.txt`]), 'second');
});

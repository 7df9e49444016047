/** The shadow-index mirrors forget one repository on its note, and every one on a reset of the change feed (''). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SimpleGit } from 'simple-git';
import { IndexMirror } from '../services/index-mirror.ts';

test("forget(gitDir) drops that repository's mirror; forget('') drops them all", async () => {
  let lists = 0;
  const git = { raw: async () => (lists++, 'a.txt\0') } as unknown as SimpleGit;
  const mirror = new IndexMirror();
  for (const repo of ['r1', 'r2']) await mirror.load(git, repo, false);
  assert.equal(lists, 2);
  mirror.forget('r1');
  for (const repo of ['r1', 'r2']) await mirror.load(git, repo, false);
  assert.equal(lists, 3, 'r1 listed again, r2 still mirrored');
  mirror.forget('');
  for (const repo of ['r1', 'r2']) await mirror.load(git, repo, false);
  assert.equal(lists, 5, 'both listed again');
});

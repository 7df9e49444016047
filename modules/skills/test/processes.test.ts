/**
 * Skills with several processes on one home: a skill created, installed or uninstalled through one process is loaded
 * (with its origin) or dropped by the other without a watcher; a version two processes load is recorded once; uses
 * counted by both add up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChangeFeed } from '@talon/module-sdk';
import { openTestDbStore, startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { SkillHistory } from '../services/history.ts';
import { json, skillMd, writeSkill } from './helpers.ts';

const moduleDir = path.resolve(import.meta.dirname, '..');
const noFeed: ChangeFeed = { note: async () => undefined, on: () => undefined };
const failOnLoss = (err: unknown) => assert.fail(`uses lost: ${String(err)}`);

/**
 * The module's tables on a fresh store; with TALON_TEST_DB=postgres on a fresh PostgreSQL database, where each statement
 * and transaction takes a connection of its own, as another process's would.
 */
const openStore = () => openTestDbStore([moduleDir]);

test('a version is recorded when its content differs from the last one; uses of two processes add up', async () => {
  const opened = await openStore();
  try {
    const here = new SkillHistory(opened.store, noFeed, failOnLoss);
    const there = new SkillHistory(opened.store, noFeed, failOnLoss);
    const v = (contentHash: string) => ({ name: 'tidy', version: '1.0.0', contentHash, changelog: 'test' });
    assert.equal(await here.record([v('h1')]), 1);
    assert.equal(await there.record([v('h1')]), 0, 'the same content loaded by another process is not recorded again');
    assert.equal(await there.record([v('h2'), v('h2')]), 1);
    assert.equal(await here.record([v('h1')]), 1, 'going back to an earlier content is a new version');
    assert.equal((await here.evolution('tidy')).evolution_count, 3);

    here.used('tidy');
    here.used('tidy');
    there.used('tidy');
    await there.flush();
    assert.equal(await here.useCount('tidy'), 3);
  } finally {
    await opened.close();
  }
});

test('the same content loaded by two processes at once is recorded once', async () => {
  const opened = await openStore();
  try {
    const here = new SkillHistory(opened.store, noFeed, failOnLoss);
    const there = new SkillHistory(opened.store, noFeed, failOnLoss);
    for (let i = 0; i < 10; i++) {
      const v = { name: 'tidy', version: '1.0.0', contentHash: `h${i}`, changelog: 'test' };
      const [x, y] = await Promise.all([here.record([v]), there.record([v])]);
      assert.equal(x + y, 1, `content ${i}`);
    }
    assert.equal((await here.evolution('tidy')).evolution_count, 10);
  } finally {
    await opened.close();
  }
});

const only = ['skills', 'agents', 'prompt-guard', 'error-envelope'];

async function status(k: TestKernel, name: string): Promise<number> {
  return (await k.request(`/api/skills/${name}`)).status;
}

test('a skill created, installed or uninstalled in one process is loaded or dropped in the other', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-skills-two-'));
  const options = { only, home, config: '[skills]\nwatch = false\n', feedPollMs: 50 };
  const [a, b] = await Promise.all([startTestKernel(options), startTestKernel(options)]);
  try {
    const created = await a.request('/api/skills/create', {
      method: 'POST',
      json: { name: 'made-here', description: 'Made in A', prompt_context: 'Be tidy.' },
    });
    assert.equal(created.status, 200);
    await waitFor(async () => (await status(b, 'made-here')) === 200, 5000, 'the created skill in the other process');

    const source = writeSkill(mkdtempSync(path.join(home, 'src-')), 'brought-in', { 'SKILL.md': skillMd('brought-in', 'Bring it.') });
    assert.equal((await a.request('/api/skills/install', { method: 'POST', json: { source } })).status, 201);
    const detail = await waitFor(
      async () =>
        (await status(b, 'brought-in')) === 200 ? json<{ origin: { type: string; url?: string } }>(await b.request('/api/skills/brought-in')) : undefined,
      5000,
      'the installed skill in the other process',
    );
    assert.deepEqual(detail?.origin, { type: 'local', url: realpathSync(source) }, 'with the origin the installing process recorded');

    assert.equal((await b.request('/api/skills/uninstall', { method: 'POST', json: { name: 'made-here' } })).status, 200);
    await waitFor(async () => (await status(a, 'made-here')) === 404, 5000, 'the uninstall in the other process');

    // Both processes loaded every bundled skill at start: each version is recorded once.
    const twice = await a.kernel.store.many('SELECT name FROM skills_versions GROUP BY name, content_hash HAVING COUNT(*) > 1');
    assert.deepEqual(twice, []);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    rmSync(home, { recursive: true, force: true });
  }
});

/**
 * A process that starts while another is finishing a restore (its folders being moved, its journal entry not yet
 * closed) waits for it and moves nothing again: both hold the entry while they move (SQLite's write lock,
 * PostgreSQL's row lock), so the folders move once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openKernelStore, openTestDbStore } from '@talon/testing';
import { Backups } from '../services/service.ts';
import { depsFor } from './env.ts';

test('a process starting while another finishes a restore waits for it, then finds nothing to move', { timeout: 30_000 }, async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-backup-race-'));
  const opened = await openTestDbStore([path.join(import.meta.dirname, '..')]);
  const store = opened.store;
  // The other process: another connection to the same database.
  const other = await openKernelStore('url' in opened ? { home, databaseUrl: opened.url } : { home: path.dirname(store.sqlite().name) });
  try {
    const staging = path.join(home, 'data', 'backup', 'restore-finishing');
    mkdirSync(path.join(staging, 'files', 'skills', 'from-backup'), { recursive: true });
    writeFileSync(path.join(staging, 'files', 'skills', 'from-backup', 'SKILL.md'), 'restored');
    await store.run('INSERT INTO backup_restore_journal (id, staging, components, created_at) VALUES (?, ?, ?, ?)', [
      'finishing',
      staging,
      JSON.stringify(['skills']),
      new Date().toISOString(),
    ]);
    const hold = store.pick({
      sqlite: 'SELECT id FROM backup_restore_journal WHERE id = ?',
      postgres: 'SELECT id FROM backup_restore_journal WHERE id = ? FOR UPDATE',
    });
    let starting: ReturnType<Backups['recoverLater']> | undefined;
    await other.store.tx(async (t) => {
      assert.ok(await t.one(hold, ['finishing']));
      // This process starts now: it reads the journal, finds the entry and waits for it.
      starting = new Backups(depsFor(home, store)).recoverLater();
      await sleep(300);
      // The other one moves the folder in place and closes the entry.
      renameSync(path.join(staging, 'files', 'skills'), path.join(home, 'skills'));
      await t.run('DELETE FROM backup_restore_journal WHERE id = ?', ['finishing']);
    });
    assert.deepEqual((await starting!).finished, [], 'nothing left for the starting process');
    assert.equal(readFileSync(path.join(home, 'skills', 'from-backup', 'SKILL.md'), 'utf8'), 'restored');
    assert.ok(existsSync(staging), 'the staging folder is for the process that placed it to remove');
  } finally {
    await other.close();
    await opened.close();
    rmSync(home, { recursive: true, force: true });
  }
});

/**
 * Off SQLite there is no raw connection: an interrupted restore is finished in start() through the store (here a
 * SQLite test store behind a store that says it is PostgreSQL; postgres.test.ts runs the rest on a real server).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Queries, Store } from '@talon/module-sdk';
import { openTestStore } from '@talon/testing';
import { Backups } from '../services/service.ts';
import { depsFor } from './env.ts';

/** A store that says it is PostgreSQL: its statements run on `on` (a SQLite test store), or fail the test. */
function postgresStore(on?: Queries): Store {
  const none = () => Promise.reject(new Error('no statement expected'));
  return {
    dialect: 'postgres',
    one: on ? (sql, params) => on.one(sql, params) : none,
    many: on ? (sql, params) => on.many(sql, params) : none,
    run: on ? (sql, params) => on.run(sql, params) : none,
    exec: none,
    tx: on ? (work) => on.tx(work) : none,
    pick: (choices) => choices.postgres,
    sqlite: () => {
      throw new Error('not SQLite');
    },
  };
}

test('on another engine an interrupted restore is finished in start() through the store: folders placed, journal row gone', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-backup-pg-'));
  const opened = openTestStore([path.join(import.meta.dirname, '..')]);
  try {
    const staging = path.join(home, 'data', 'backup', 'restore-crashed');
    mkdirSync(path.join(staging, 'files', 'skills', 'from-backup'), { recursive: true });
    writeFileSync(path.join(staging, 'files', 'skills', 'from-backup', 'SKILL.md'), 'restored');
    await opened.store.run('INSERT INTO backup_restore_journal (id, staging, components, created_at) VALUES (?, ?, ?, ?)', [
      'crashed',
      staging,
      JSON.stringify(['skills']),
      new Date().toISOString(),
    ]);
    const done = await new Backups(depsFor(home, postgresStore(opened.store))).recoverLater();
    assert.deepEqual(done.finished, ['crashed']);
    assert.equal(readFileSync(path.join(home, 'skills', 'from-backup', 'SKILL.md'), 'utf8'), 'restored');
    assert.ok(!existsSync(staging));
    assert.deepEqual(await opened.store.many('SELECT id FROM backup_restore_journal'), []);
  } finally {
    opened.close();
    rmSync(home, { recursive: true, force: true });
  }
});

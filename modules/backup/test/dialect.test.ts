/**
 * The database part of a backup is SQLite's backup API: on another engine it is refused with where to look instead;
 * the rest works there, such as finishing an interrupted restore through the store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { HttpError, type Queries, type Store } from '@talon/module-sdk';
import { openTestStore } from '@talon/testing';
import { Backups, type BackupDeps } from '../services/service.ts';

/** A store that says it is PostgreSQL: its statements run on `on` (a SQLite test store), or fail the test. */
function postgresStore(on?: Queries): Store {
  const none = () => Promise.reject(new Error('no statement expected'));
  return {
    dialect: 'postgres',
    one: on ? (sql, params) => on.one(sql, params) : none,
    many: on ? (sql, params) => on.many(sql, params) : none,
    run: on ? (sql, params) => on.run(sql, params) : none,
    exec: none,
    tx: none,
    pick: (choices) => choices.postgres,
    sqlite: () => {
      throw new Error('not SQLite');
    },
  };
}

function depsFor(home: string, store: Store): BackupDeps {
  return {
    store,
    home,
    dataDir: path.join(home, 'data', 'backup'),
    moduleDir: path.join(import.meta.dirname, '..'),
    version: '0.0.0',
    backupsDir: () => path.join(home, 'backups'),
    log: pino({ level: 'silent' }),
    config: { file: path.join(home, 'config.toml'), read: () => ({}) } as Partial<BackupDeps['config']> as BackupDeps['config'],
  } as Partial<BackupDeps> as BackupDeps;
}

test('on PostgreSQL a backup or restore of the database is refused (501, pg_dump), before anything is written', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-backup-pg-'));
  try {
    const backups = new Backups(depsFor(home, postgresStore()));
    await assert.rejects(backups.create(['database']), (err: unknown) => {
      assert.ok(err instanceof HttpError);
      assert.equal(err.statusCode, 501);
      assert.match(err.message, /backup on PostgreSQL: use pg_dump; see the fleet issue/);
      return true;
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

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

/** The database part of a backup is SQLite's backup API: on another engine it is refused with where to look instead. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { HttpError, type Store } from '@talon/module-sdk';
import { Backups, type BackupDeps } from '../services/service.ts';

/** A store that says it is PostgreSQL; any statement would be a failure of the test. */
function postgresStore(): Store {
  const none = () => Promise.reject(new Error('no statement expected'));
  return {
    dialect: 'postgres',
    one: none,
    many: none,
    run: none,
    exec: none,
    tx: none,
    pick: (choices) => choices.postgres,
    sqlite: () => {
      throw new Error('not SQLite');
    },
  };
}

test('on PostgreSQL a backup or restore of the database is refused (501, pg_dump), before anything is written', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-backup-pg-'));
  try {
    const deps = {
      store: postgresStore(),
      home,
      dataDir: path.join(home, 'data', 'backup'),
      moduleDir: path.join(import.meta.dirname, '..'),
      version: '0.0.0',
      backupsDir: () => path.join(home, 'backups'),
      log: pino({ level: 'silent' }),
    } as Partial<BackupDeps> as BackupDeps;
    const backups = new Backups(deps);
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

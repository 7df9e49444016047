import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startTestKernel } from '@talon/testing';
import { applyMigrations, pendingMigrations } from '../kernel/migrations.ts';

const runMigrations = (db: Database.Database, module: string, dir: string) => applyMigrations(db, module, pendingMigrations(db, module, dir));

const fixture = path.resolve('test/fixtures/modules/migrator');

test('migrations run once, in order, and are recorded per module across restarts', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-mig-'));
  try {
    for (let i = 0; i < 2; i++) {
      // SQLite in every run: the ledger is read from the home's file below (PostgreSQL's: test/postgres/kernel.test.ts).
      const k = await startTestKernel({ home, modulesDir: path.dirname(fixture), only: ['migrator'], database: 'sqlite' });
      const body = (await (await k.request('/api/migrator')).json()) as { items: Array<{ name: string }> };
      assert.deepEqual(body.items, [{ name: 'seed' }], 'the seed row is inserted once, not once per start');
      await k.stop();
    }
    const db = new Database(path.join(home, 'talon.db'));
    const rows = db.prepare("SELECT id FROM kernel_migrations WHERE module = 'migrator' ORDER BY id").all();
    db.close();
    assert.deepEqual(rows, [{ id: '0001_items' }, { id: '0002_seed' }]);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('a failing migration rolls back entirely and is not recorded', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-migfail-'));
  cpSync(fixture, dir, { recursive: true });
  writeFileSync(path.join(dir, 'migrations', '0003_bad.sql'), "INSERT INTO migrator_items (name) VALUES ('half');\nINSERT INTO nope VALUES (1);\n");
  const db = new Database(':memory:');
  try {
    assert.throws(() => runMigrations(db, 'migrator', dir), /migration migrator\/0003_bad.sql failed/);
    const names = db.prepare('SELECT name FROM migrator_items').all();
    assert.deepEqual(names, [{ name: 'seed' }], 'the half-applied insert was rolled back');
    const ids = db
      .prepare('SELECT id FROM kernel_migrations')
      .all()
      .map((r) => (r as { id: string }).id);
    assert.deepEqual(ids, ['0001_items', '0002_seed']);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an applied migration that changed afterwards stops the module', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-migsum-'));
  cpSync(fixture, dir, { recursive: true });
  const db = new Database(':memory:');
  try {
    runMigrations(db, 'migrator', dir);
    writeFileSync(path.join(dir, 'migrations', '0002_seed.sql'), "INSERT INTO migrator_items (name) VALUES ('changed');\n");
    assert.throws(() => runMigrations(db, 'migrator', dir), /was changed after it was applied/);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

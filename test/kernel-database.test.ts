import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { waitFor } from '@talon/module-sdk/testing';
import { closeDatabase, openDatabase, PAGE_CACHE_KIB } from '../kernel/db.ts';

const failures: string[] = [];

function withHome(run: (home: string) => Promise<void>) {
  return async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'talon-db-'));
    try {
      await run(home);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  };
}

/**
 * The WAL-index header in the -shm file (https://www.sqlite.org/walformat.html, native byte order): mxFrame, the last
 * valid frame of the WAL, at byte 16; nBackfill, the frames already copied into the database file, at byte 96.
 */
function walIndex(file: string): { frames: number; backfilled: number } {
  const shm = readFileSync(`${file}-shm`);
  return { frames: shm.readUInt32LE(16), backfilled: shm.readUInt32LE(96) };
}

test(
  "the database's page cache is bounded below better-sqlite3's 16 MB default (it filled as the database grew)",
  withHome(async (home) => {
    const plain = new Database(':memory:');
    const db = openDatabase(home, (e) => failures.push(e));
    try {
      const unbounded = plain.pragma('cache_size', { simple: true }) as number;
      assert.equal(unbounded, -16000, "better-sqlite3's compiled-in default, which the bound exists to replace");
      assert.equal(db.pragma('cache_size', { simple: true }), -PAGE_CACHE_KIB, 'the service opens its database with its own bound');
      assert.ok(PAGE_CACHE_KIB < -unbounded);
    } finally {
      await closeDatabase(db);
      plain.close();
    }
  }),
);

test(
  'the WAL is checkpointed by a thread of its own, not by the commits of the thread that serves requests; closing the database stops it',
  withHome(async (home) => {
    const file = path.join(home, 'talon.db');
    const db = openDatabase(home, (e) => failures.push(e), 200);
    try {
      db.exec('CREATE TABLE t (x TEXT)');
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      for (let i = 0; i < 200; i++) insert.run('x'.repeat(2000));
      const written = walIndex(file);
      assert.ok(written.frames > 100 && written.frames < 4000, `the writes stay below the automatic checkpoint (${written.frames} frames)`);
      assert.ok(written.backfilled < written.frames, 'no commit checkpointed');
      await waitFor(() => walIndex(file).backfilled === walIndex(file).frames, 5_000, 'the checkpointer to copy the WAL into the database');
    } finally {
      await closeDatabase(db);
    }
    // The last connection to close removes the WAL: the checkpointer's was closed with the service's.
    assert.equal(existsSync(`${file}-wal`), false);
    assert.deepEqual(failures, []);
  }),
);

test(
  'a database never closed does not keep its process alive (the checkpointer thread is unreferenced)',
  withHome(async (home) => {
    // Opened, left open for longer than the checkpointer takes to start (any failure of it fails the run), never closed:
    // the process must end by itself.
    const script = `import { openDatabase } from ${JSON.stringify(path.resolve('kernel/db.ts'))}; openDatabase(${JSON.stringify(home)}, (e) => { console.error(e); process.exitCode = 1; }); setTimeout(() => {}, 1500);`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 15_000, encoding: 'utf8' });
    assert.equal(run.error, undefined, 'the process ended by itself');
    assert.equal(run.status, 0, run.stderr);
  }),
);

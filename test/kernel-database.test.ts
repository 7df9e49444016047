import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { waitFor } from '@talon/testing';
import { closeDatabase, openDatabase, PAGE_CACHE_KIB } from '../kernel/db.ts';
import { START_AT_WAL_BYTES, startCheckpointer } from '../kernel/checkpointer.ts';

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
      for (let i = 0; i < 700; i++) insert.run('x'.repeat(2000));
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
  'the thread starts only once the WAL has grown: a database that is barely written never pays for it',
  withHome(async (home) => {
    const file = path.join(home, 'talon.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    const checkpointer = startCheckpointer(file, (e) => failures.push(e), 50);
    try {
      db.exec('CREATE TABLE t (x TEXT)');
      db.prepare('INSERT INTO t VALUES (?)').run('small');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(checkpointer.running(), false, 'a few KB of WAL: no thread');
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      for (let i = 0; i < 700; i++) insert.run('x'.repeat(2000));
      assert.ok(statSync(`${file}-wal`).size >= START_AT_WAL_BYTES);
      await waitFor(() => checkpointer.running(), 5_000, 'the thread to start');
    } finally {
      await checkpointer.stop();
      db.close();
    }
  }),
);

test(
  'a database never closed does not keep its process alive (the checkpointer thread is unreferenced)',
  withHome(async (home) => {
    // Opened, written past the mark that starts the checkpointer, left open until the thread has checkpointed, never
    // closed: the process must end by itself.
    const script = `
      import { openDatabase } from ${JSON.stringify(path.resolve('kernel/db.ts'))};
      import { readFileSync } from 'node:fs';
      const db = openDatabase(${JSON.stringify(home)}, (e) => { console.error(e); process.exitCode = 1; }, 100);
      db.exec('CREATE TABLE t (x TEXT)');
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      for (let i = 0; i < 700; i++) insert.run('x'.repeat(2000));
      // Kept alive only while waiting (at most 10 s) for the checkpointer to copy the WAL; then nothing holds the process.
      const started = Date.now();
      const poll = () => {
        // Read here, so that the connection stays reachable (a collected one would be closed by its finalizer).
        if (!db.open) throw new Error('the connection was closed');
        const shm = readFileSync(${JSON.stringify(path.join(home, 'talon.db-shm'))});
        if (shm.readUInt32LE(96) === shm.readUInt32LE(16)) return;
        if (Date.now() - started > 10000) { console.error('the checkpointer did not run'); process.exitCode = 1; return; }
        setTimeout(poll, 50);
      };
      poll();`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 20_000, encoding: 'utf8' });
    assert.equal(run.error, undefined, 'the process ended by itself');
    assert.equal(run.status, 0, run.stderr);
  }),
);

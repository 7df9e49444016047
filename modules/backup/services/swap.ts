/**
 * The database part of a restore. The archived snapshot is prepared in the staging folder (the live
 * tables of preserved modules copied in, the journal row added), then copied page by page over the live
 * database with SQLite's online backup API, in one write transaction: a crash leaves the old database or
 * the new one. The copy runs in a worker thread: a module writing meanwhile waits on SQLite's busy timeout
 * for the copy to commit, instead of blocking the thread the copy needs.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Puts the live tables of the preserved modules (and their migration records) into the staging database. */
export function carryOver(db: Database, stagingFile: string, modules: string[], journal: { id: string; staging: string; components: string[] }): void {
  const prefixes = modules.map((m) => `${m.replace(/-/g, '_')}_`);
  const ours = (name: string) => prefixes.some((p) => name.startsWith(p));
  db.prepare('ATTACH DATABASE ? AS stg').run(stagingFile);
  try {
    db.transaction(() => {
      const old = db.prepare(`SELECT type, name FROM stg.sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'`).all() as Array<{
        type: string;
        name: string;
      }>;
      for (const o of old.filter((x) => ours(x.name))) db.exec(`DROP ${o.type === 'view' ? 'VIEW' : 'TABLE'} IF EXISTS stg.${quote(o.name)}`);
      const live = db
        .prepare(`SELECT type, name, sql FROM main.sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type = 'table' DESC`)
        .all() as Array<{ type: string; name: string; sql: string }>;
      for (const o of live.filter((x) => ours(x.name))) {
        // CREATE TABLE x / CREATE INDEX x ON t: the schema prefix goes on the created object's name.
        db.exec(o.sql.replace(/^(CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?)/i, '$1stg.'));
        if (o.type === 'table') db.exec(`INSERT INTO stg.${quote(o.name)} SELECT * FROM main.${quote(o.name)}`);
      }
      const marks = modules.map(() => '?').join(', ');
      db.prepare(`DELETE FROM stg.kernel_migrations WHERE module IN (${marks})`).run(...modules);
      db.prepare(`INSERT INTO stg.kernel_migrations SELECT * FROM main.kernel_migrations WHERE module IN (${marks})`).run(...modules);
      db.prepare('INSERT INTO stg.backup_restore_journal (id, staging, components, created_at) VALUES (?, ?, ?, ?)').run(
        journal.id,
        journal.staging,
        JSON.stringify(journal.components),
        new Date().toISOString(),
      );
    })();
  } finally {
    db.exec('DETACH DATABASE stg');
  }
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.lib);
const source = new Database(workerData.from, { readonly: true });
source.backup(workerData.to, { progress: () => 0x7fffffff }).then(
  () => { source.close(); parentPort.postMessage({ ok: true }); },
  (err) => { source.close(); parentPort.postMessage({ ok: false, error: String(err && err.message || err) }); },
);`;

/**
 * Copies the database `from` onto `to` with SQLite's backup API in a worker thread, in one step: one read
 * transaction on the source (a consistent snapshot while others write, WAL readers never block writers) and one
 * write transaction on the destination. Used both ways: live → snapshot for a backup, staged → live for a restore.
 * Off the main thread, the copy's final fsync never stalls a request. `moduleDir` locates better-sqlite3.
 */
export function copyDatabase(from: string, to: string, moduleDir: string): Promise<void> {
  const lib = createRequire(path.join(moduleDir, 'index.ts')).resolve('better-sqlite3');
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { lib, from, to } });
    worker.once('message', (m: { ok: boolean; error?: string }) => (m.ok ? resolve() : reject(new Error(`database copy failed: ${m.error}`))));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`database copy worker exited (${code})`)));
  });
}

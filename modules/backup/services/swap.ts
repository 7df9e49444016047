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
import Database, { type Database as Db } from 'better-sqlite3';
import { tablePrefix } from './components.ts';

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Puts the live tables of the preserved modules (and their migration records) into the staging database, with the
 * kernel's tables of the processes sharing the database (their rows and AUTOINCREMENT counters), which describe the
 * processes running now, not the archived moment. Its own connection on the staging file, the live database
 * attached and only read: nothing runs on the store's connection, where another module may have a transaction open. One
 * transaction, so the live tables are read as of one moment.
 */
export function carryOver(liveFile: string, stagingFile: string, modules: string[], journal: { id: string; staging: string; components: string[] }): void {
  const prefixes = modules.map(tablePrefix);
  const ours = (name: string) => prefixes.some((p) => name.startsWith(p)) || LIVE_KERNEL_TABLES.includes(name);
  const db = new Database(stagingFile, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('ATTACH DATABASE ? AS live').run(liveFile);
    db.transaction(() => {
      const old = db.prepare(`SELECT type, name FROM main.sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'`).all() as Array<{
        type: string;
        name: string;
      }>;
      for (const o of old.filter((x) => ours(x.name))) db.exec(`DROP ${o.type === 'view' ? 'VIEW' : 'TABLE'} IF EXISTS main.${quote(o.name)}`);
      const live = db
        .prepare(`SELECT type, name, sql FROM live.sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type = 'table' DESC`)
        .all() as Array<{ type: string; name: string; sql: string }>;
      for (const o of live.filter((x) => ours(x.name) || ((x.type === 'index' || x.type === 'trigger') && ours(tableOf(x.sql))))) {
        // Created on this connection's main database: the staging file.
        db.exec(o.sql);
        if (o.type === 'table') db.exec(`INSERT INTO main.${quote(o.name)} SELECT * FROM live.${quote(o.name)}`);
      }
      carrySequences(
        db,
        live.filter((x) => x.type === 'table' && ours(x.name)).map((x) => x.name),
      );
      const marks = modules.map(() => '?').join(', ');
      db.prepare(`DELETE FROM main.kernel_migrations WHERE module IN (${marks})`).run(...modules);
      db.prepare(`INSERT INTO main.kernel_migrations SELECT * FROM live.kernel_migrations WHERE module IN (${marks})`).run(...modules);
      db.prepare('INSERT INTO main.backup_restore_journal (id, staging, components, created_at) VALUES (?, ?, ?, ?)').run(
        journal.id,
        journal.staging,
        JSON.stringify(journal.components),
        new Date().toISOString(),
      );
    })();
  } finally {
    db.close();
  }
}

/**
 * The kernel's tables of the running processes: which nodes live (a node missing from a restored table would look dead
 * to the others, and its work be taken over) and the change feed's and events' sequences (a sequence set back would hide
 * the next notes from processes that read up to a higher one).
 */
const LIVE_KERNEL_TABLES = ['kernel_nodes', 'kernel_changes', 'kernel_events'];

/** The table an index or trigger belongs to ('CREATE INDEX x ON t (…)'). */
function tableOf(sql: string): string {
  return /\sON\s+"?([\w]+)"?/i.exec(sql)?.[1] ?? '';
}

/** AUTOINCREMENT counters of the carried tables, as live has them (rows deleted since still count). */
function carrySequences(db: Db, tables: string[]): void {
  const hasSequence = (schema: string) => db.prepare(`SELECT 1 FROM ${schema}.sqlite_master WHERE name = 'sqlite_sequence'`).get();
  if (!tables.length || !hasSequence('live') || !hasSequence('main')) return;
  const marks = tables.map(() => '?').join(', ');
  db.prepare(`DELETE FROM main.sqlite_sequence WHERE name IN (${marks})`).run(...tables);
  db.prepare(`INSERT INTO main.sqlite_sequence (name, seq) SELECT name, seq FROM live.sqlite_sequence WHERE name IN (${marks})`).run(...tables);
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

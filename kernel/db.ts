import Database from 'better-sqlite3';
import path from 'node:path';

// wal_autocheckpoint: at SQLite's 1,000 pages, one write-heavy request in ~60 paid a checkpoint's fsyncs (the docs/decisions*.md entry on wal_autocheckpoint).
const PRAGMAS = ['journal_mode = WAL', 'synchronous = NORMAL', 'busy_timeout = 5000', 'foreign_keys = ON', 'wal_autocheckpoint = 4000'];

/** The one database of the service. Modules share it; each prefixes its tables with its id. */
export function openDatabase(home: string): Database.Database {
  const db = new Database(path.join(home, 'talon.db'));
  for (const pragma of PRAGMAS) db.pragma(pragma);
  return db;
}

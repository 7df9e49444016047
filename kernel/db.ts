import Database from 'better-sqlite3';
import path from 'node:path';

// wal_autocheckpoint: at SQLite's 1,000 pages, one agent turn in ~60 paid a checkpoint's fsyncs (docs/decisions-agents.md).
const PRAGMAS = ['journal_mode = WAL', 'synchronous = NORMAL', 'busy_timeout = 5000', 'foreign_keys = ON', 'wal_autocheckpoint = 4000'];

/** The one database of the service. Modules share it; each prefixes its tables with its id. */
export function openDatabase(home: string): Database.Database {
  const db = new Database(path.join(home, 'talon.db'));
  for (const pragma of PRAGMAS) db.pragma(pragma);
  return db;
}

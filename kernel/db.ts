import Database from 'better-sqlite3';
import path from 'node:path';

/** The one database of the service. Modules share it; each prefixes its tables with its id. */
export function openDatabase(home: string): Database.Database {
  const db = new Database(path.join(home, 'talon.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  return db;
}

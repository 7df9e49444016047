import Database from 'better-sqlite3';
import path from 'node:path';

/** The one database of the service. Modules share it; each prefixes its tables with its id. */
export function openDatabase(home: string): Database.Database {
  const db = new Database(path.join(home, 'talon.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  // SQLite checkpoints the WAL inside the commit that takes it past this many pages: that request then copies the
  // WAL into the database file and waits for its fsyncs (tens of ms on a busy disk). An agent turn writes about 17
  // pages, so at the default of 1,000 one turn in ~60 paid it, which set the turn's p99 (issue 10 item 11); at
  // 4,000 pages (a WAL of up to 16 MB, reused in place) it is one turn in ~240.
  db.pragma('wal_autocheckpoint = 4000');
  return db;
}

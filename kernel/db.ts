import Database from 'better-sqlite3';
import path from 'node:path';
import { startCheckpointer, type Checkpointer } from './checkpointer.ts';

// wal_autocheckpoint: the backstop of the checkpointer thread (checkpointer.ts); reached only if that thread stops.
// cache_size (negative: KiB): better-sqlite3 builds SQLite with a 16 MB page cache, which fills as the database grows
// and was most of a soak's steady RSS growth; 4 MiB holds the hot pages, the OS file cache the rest
// (docs/decisions-operations.md).
export const PAGE_CACHE_KIB = 4096;
const PRAGMAS = [
  'journal_mode = WAL',
  'synchronous = NORMAL',
  'busy_timeout = 5000',
  'foreign_keys = ON',
  'wal_autocheckpoint = 4000',
  `cache_size = -${PAGE_CACHE_KIB}`,
];

const checkpointers = new WeakMap<Database.Database, Checkpointer>();

/** The one database of the service. Modules share it; each prefixes its tables with its id. */
export function openDatabase(
  home: string,
  onCheckpointError: (message: string) => void,
  checkpointEveryMs?: number,
): Database.Database {
  const file = path.join(home, 'talon.db');
  const db = new Database(file);
  for (const pragma of PRAGMAS) db.pragma(pragma);
  checkpointers.set(db, startCheckpointer(file, onCheckpointError, checkpointEveryMs));
  return db;
}

/** Stops the database's checkpointer, then closes it (the last connection checkpoints the WAL and removes it). */
export async function closeDatabase(db: Database.Database): Promise<void> {
  await checkpointers.get(db)?.stop();
  db.close();
}

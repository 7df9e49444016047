import Database from 'better-sqlite3';
import path from 'node:path';
import { ConfigError } from '@talon/module-sdk';
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

/** Which engine the service runs on: SQLite in the home, or the PostgreSQL server a URL names. */
export type DatabaseChoice = { engine: 'sqlite' } | { engine: 'postgres'; url: string; source: string };

/**
 * The database to use: the first URL given by the embedder (`databaseUrl`), TALON_DATABASE_URL or `[database] url`;
 * none: SQLite, as always. A URL that is not a PostgreSQL one stops start-up naming where it came from.
 */
export function chooseDatabase(given: Array<[source: string, url: string | undefined]>): DatabaseChoice {
  const found = given.find(([, url]) => url?.trim());
  if (!found) return { engine: 'sqlite' };
  const [source, raw] = found;
  const url = raw!.trim();
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !/^postgres(ql)?:$/.test(parsed.protocol) || !parsed.hostname)
    throw new ConfigError(
      `invalid value for '${source}': not a PostgreSQL URL (postgres://user@host:5432/database); unset it for SQLite`,
    );
  // config.toml is shown by GET /api/config and copied by backups; a password belongs where neither reaches it.
  if (source === 'database.url' && parsed.password)
    throw new ConfigError(
      `invalid value for '${source}': it holds a password; set TALON_DATABASE_URL instead, or the password in ` +
        'PGPASSWORD or ~/.pgpass',
    );
  return { engine: 'postgres', url, source };
}

/** A database URL as it may be logged: without its password. */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  parsed.password = '';
  return parsed.toString();
}

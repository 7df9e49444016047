/**
 * The data directory: where the files the modules keep for the whole service live (their data folders and the folders
 * a person browses: modules' `ctx.home` and `ctx.dataDir`). One machine keeps them in its home; the nodes of a fleet
 * each have a home of their own (config.toml, the log files) and share one data directory, `TALON_DATA_DIR`. On
 * PostgreSQL the database remembers which directory that is, so that a node that mounted another one (or none)
 * refuses to start instead of writing files the other nodes never see.
 */
import { randomUUID } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, readOrCreateOnce, type Store } from '@talon/module-sdk';
import { createTables, type TableDdl } from './schema.ts';

/**
 * Facts the whole fleet agrees on, one row each. Only PostgreSQL runs the check (on SQLite the database is a file of
 * the home, so a second machine cannot share it); the SQLite statement is there for the parity of the kernel's tables.
 */
export const FLEET_TABLES: TableDdl = {
  sqlite: ['CREATE TABLE IF NOT EXISTS kernel_fleet (key TEXT PRIMARY KEY, value TEXT NOT NULL)'],
  postgres: ['CREATE TABLE IF NOT EXISTS kernel_fleet (key TEXT PRIMARY KEY, value TEXT NOT NULL)'],
};

/** The marker file in the data directory, holding the id the database keeps under DATA_DIR_KEY. */
export const MARKER = '.talon-fleet';
const DATA_DIR_KEY = 'data_dir';

/** The data directory and where it was named: an option or `TALON_DATA_DIR`; undefined: it is the node's home. */
export interface DataPlace {
  dir: string;
  from?: string;
}

/**
 * Makes a named data directory if missing and checks this process can write there. A path that is a file, or a folder
 * it may not write, stops start-up naming it (a ConfigError: exit code 2).
 */
export function prepareDataDir(place: DataPlace): void {
  if (!place.from) return;
  try {
    mkdirSync(place.dir, { recursive: true });
    if (!statSync(place.dir).isDirectory()) throw new Error('it is not a directory');
    accessSync(place.dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(`${place.from}=${place.dir} is not a writable directory (${why})`);
  }
}

/**
 * The data directory against the database. A directory without a marker gets one (created exclusively, so nodes
 * starting together on it read the same id); the first id written to the database wins (INSERT … ON CONFLICT DO
 * NOTHING, then read back), and every node must then find that id in its directory. A directory that holds another
 * id, or held none while the database already had one, is refused (the marker this node made there is taken back).
 */
export async function agreeOnDataDir(store: Store, place: DataPlace): Promise<void> {
  await createTables(store, FLEET_TABLES);
  const file = path.join(place.dir, MARKER);
  const found = readMarker(file);
  // Made whole or not at all, and by one of the nodes starting together on it (the others read its id).
  const made = randomUUID();
  const mine = found ?? readOrCreateOnce(file, () => `${made}\n`).trim();
  const created = found === undefined && mine === made;
  await store.run('INSERT INTO kernel_fleet (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING', [
    DATA_DIR_KEY,
    mine,
  ]);
  const row = await store.one<{ value: string }>('SELECT value FROM kernel_fleet WHERE key = ?', [DATA_DIR_KEY]);
  if (row?.value === mine) return;
  if (created) unlinkSync(file);
  throw new ConfigError(refusal(place, found === undefined ? 'missing' : `different (${found}, not ${row?.value})`));
}

function refusal(place: DataPlace, state: string): string {
  const fix = 'mount the same directory on every node';
  if (place.from)
    return `${place.from}=${place.dir} is not the fleet's shared directory: its ${MARKER} is ${state}; ${fix}`;
  return (
    `TALON_DATA_DIR is not set, so this node keeps the shared files in its home ${place.dir}, which is not the ` +
    `fleet's shared directory: its ${MARKER} is ${state}; ${fix} and set TALON_DATA_DIR to it`
  );
}

/** The marker's id; undefined when there is no marker. */
function readMarker(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`${file} cannot be read: ${(err as Error).message}`);
  }
}

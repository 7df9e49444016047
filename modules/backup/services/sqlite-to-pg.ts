/**
 * A SQLite archive restored on PostgreSQL: one machine's install moving onto a fleet. The archived database file is
 * turned into the table files a PostgreSQL backup holds (pg-export's format), with this database's columns and types
 * in their headers, so the same check (planRestore) and the same transaction (restoreTables) restore it. Each value
 * goes as its text: integers exact (read as BigInt), reals as JavaScript writes them, BLOBs as base64 for BYTEA.
 *
 * Left out: SQLite's own tables (FTS5 and vector indexes: virtual tables and their shadow tables), which PostgreSQL
 * keeps in its own form (memory's tsvector is generated; its quantised vectors are filled in by the memory module),
 * and the tables this database does not have (planRestore warns). A column this database has and the file lacks is
 * restored empty; a column the file has and this database lacks is another version's schema: 409, as planRestore.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import Database, { type Database as Db } from 'better-sqlite3';
import { conflict, type Queries } from '@talon/module-sdk';
import { TABLES_DIR, type TableEntry } from './components.ts';
import { BadArchive } from './extract.ts';
import { quote, schemaTables, tableFile, writeLine, type Column, type TableHeader } from './pg-tables.ts';
import { ordinaryTables, SQLITE_TABLES, type MasterRow } from './sqlite-tables.ts';

type SqliteValue = bigint | number | string | Buffer | null;

/** Writes `<files>/database/tables/<table>.jsonl` for every table of the file this database has; answers them. */
export async function sqliteToTableFiles(file: string, files: string, q: Queries): Promise<TableEntry[]> {
  const live = await schemaTables(q);
  const dir = path.join(files, TABLES_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.defaultSafeIntegers(true);
    const written: TableEntry[] = [];
    for (const table of ordinaryTables(db.prepare(SQLITE_TABLES).all() as MasterRow[])) {
      const columns = live.get(table);
      if (!columns) continue;
      const entry = { name: table, file: tableFile(table) };
      written.push({ ...entry, rows: await convertTable(db, table, columns, path.join(dir, entry.file)) });
    }
    return written;
  } finally {
    db.close();
  }
}

/** One table, row by row, in this database's column order; answers the row count. */
async function convertTable(db: Db, table: string, columns: Column[], file: string): Promise<number> {
  const present = new Set((db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as Array<{ name: string }>).map((c) => c.name));
  const unknown = [...present].filter((name) => !columns.some((c) => c.name === name));
  if (unknown.length)
    throw conflict(`the backup's table ${table} has columns this database's has not (${unknown.join(', ')}): restore it with the version that made it`);
  const select = columns.map((c) => (present.has(c.name) ? quote(c.name) : 'NULL')).join(', ');
  const out = createWriteStream(file, { mode: 0o600 });
  let rows = 0;
  try {
    const header: TableHeader = { table, columns };
    await writeLine(out, JSON.stringify(header));
    for (const row of db
      .prepare(`SELECT ${select} FROM ${quote(table)}`)
      .raw()
      .iterate() as Iterable<SqliteValue[]>) {
      await writeLine(out, JSON.stringify(row.map((value, i) => asText(value, columns[i]!, table))));
      rows++;
    }
    out.end();
    await finished(out);
  } catch (err) {
    out.destroy();
    throw err;
  }
  return rows;
}

/** A SQLite value as PostgreSQL's text form of the column's type (see pg-tables). */
function asText(value: SqliteValue, column: Column, table: string): string | null {
  if (value === null) return null;
  if (Buffer.isBuffer(value)) {
    if (column.type !== 'bytea') throw new BadArchive(`table ${table}: column ${column.name} holds bytes, where ${column.type} is expected`);
    return value.toString('base64');
  }
  return String(value);
}

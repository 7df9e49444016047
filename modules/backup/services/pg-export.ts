/**
 * The database part of a backup on PostgreSQL: every table of the schema exported row by row into files of a snapshot
 * folder, which the archive then takes in (tar needs each file's size before its bytes). In-process, through the
 * store: no pg_dump binary and no database URL for the module (docs/decisions-fleet.md says why).
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import type { Queries, Store } from '@talon/module-sdk';
import type { TableEntry } from './components.ts';
import { quote, schemaTables, tableFile, writeLine, type Column, type TableHeader } from './pg-tables.ts';

/** Rows per fetch: a table is never held whole, only this many rows of it. */
const PAGE = 500;
const CURSOR = 'talon_backup_rows';

/**
 * Writes `<dir>/<table>.jsonl` for every table and answers what it wrote. One REPEATABLE READ, read-only transaction:
 * every table as of one moment, while the service goes on writing (readers never block writers). The transaction only
 * awaits its own fetches and the local file writes between them, so it stays far below the idle-transaction timeout.
 */
export async function exportTables(store: Store, dir: string): Promise<TableEntry[]> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return store.tx(async (t) => {
    // Must be the transaction's first statement: the snapshot is taken at its first query.
    await t.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const written: TableEntry[] = [];
    for (const [name, columns] of await schemaTables(t)) {
      const file = tableFile(name);
      written.push({ name, file, rows: await exportTable(t, name, columns, path.join(dir, file)) });
    }
    return written;
  });
}

/** One table through a cursor, PAGE rows at a time; answers the row count. */
async function exportTable(t: Queries, table: string, columns: Column[], file: string): Promise<number> {
  // Text casts give every value's exact text form (no number parsing on the way); BYTEA comes as bytes for base64.
  const select = columns.map((c, i) => `${quote(c.name)}${c.type === 'bytea' ? '' : '::text'} AS c${i}`).join(', ');
  await t.exec(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR SELECT ${select} FROM ${quote(table)}`);
  // 'w': the store runs a transaction's work again after a lost race, and this file is then written anew.
  const out = createWriteStream(file, { mode: 0o600, flags: 'w' });
  let rows = 0;
  try {
    const header: TableHeader = { table, columns };
    await writeLine(out, JSON.stringify(header));
    for (;;) {
      const page = await t.many<Record<string, string | Buffer | null>>(`FETCH FORWARD ${PAGE} FROM ${CURSOR}`);
      for (const row of page) await writeLine(out, JSON.stringify(columns.map((_, i) => encode(row[`c${i}`]))));
      rows += page.length;
      if (page.length < PAGE) break;
    }
    out.end();
    await finished(out);
  } catch (err) {
    out.destroy();
    throw err;
  }
  await t.exec(`CLOSE ${CURSOR}`);
  return rows;
}

const encode = (v: string | Buffer | null | undefined): string | null => (v == null ? null : Buffer.isBuffer(v) ? v.toString('base64') : v);

/**
 * A PostgreSQL archive restored on SQLite: a fleet moving back onto one machine. The table files (pg-export's format)
 * are checked as on PostgreSQL (restore-plan: the same migrations, so the same tables and meanings), then, in one
 * transaction through the store, the restored tables are emptied and their rows inserted, each value turned back from
 * its PostgreSQL text form by the archived column's type: integers exact (a BigInt past 2^53), floats as numbers,
 * BYTEA from base64. Columns only PostgreSQL has (memory's quantised vectors) are left out; SQLite's own tables stay
 * this database's: memory's FTS5 index follows its table by triggers and its vec0 tables are filled at its start.
 *
 * The store's SQLite transaction may await only its own statements (it holds the one connection), so the table files
 * are read synchronously inside it, a table never held whole: the process serves nothing else while it runs.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { conflict, type Queries, type SqlValue } from '@talon/module-sdk';
import type { Manifest } from './components.ts';
import { BadArchive } from './extract.ts';
import { quote, type Column } from './pg-tables.ts';
import { checkRowCount, parseHeader, parseRow, planTables, type RestorePlan, type TablePlan } from './restore-plan.ts';
import { ordinaryTables, SQLITE_TABLES, type MasterRow } from './sqlite-tables.ts';

/** The plan of the archive's tables on this SQLite database: its columns the archive holds, by name. */
export async function planSqliteRestore(q: Queries, staged: string, manifest: Manifest, preserved: string[]): Promise<RestorePlan> {
  return planTables(q, staged, manifest, preserved, await sqliteTables(q), byName);
}

/** This database's ordinary tables with their columns in order (the declared type: SQLite's). */
async function sqliteTables(q: Queries): Promise<Map<string, Column[]>> {
  const tables = new Map<string, Column[]>();
  for (const name of ordinaryTables(await q.many<MasterRow>(SQLITE_TABLES)))
    tables.set(name, await q.many<Column>('SELECT name, type FROM pragma_table_info(?) ORDER BY cid', [name]));
  return tables;
}

/**
 * The ledgers matched, so both schemas are one version's: a column only the archive has is PostgreSQL's own form
 * (left out), one only this database has is SQLite's (its default). Each column keeps the archive's type, which says
 * how to read its text.
 */
function byName(archived: Column[], live: Column[]): Array<Column & { at: number }> | string {
  const here = new Set(live.map((c) => c.name));
  const columns = archived.map((c, at) => ({ ...c, at })).filter((c) => here.has(c.name));
  return columns.length ? columns : `shares no column with this database's (${live.map((c) => c.name).join(', ')})`;
}

/**
 * Replaces the planned tables' rows, in the caller's transaction: every one emptied first (with the tables not in the
 * backup that refer to them), then filled. Foreign keys are checked when every table is in (a row may come before the
 * one it refers to): deferred to the commit, and checked table by table before it so a broken one is named.
 * Answers warnings (tables emptied because they refer to restored ones).
 */
export async function restoreSqliteTables(t: Queries, plan: RestorePlan): Promise<string[]> {
  const names = new Set(plan.tables.map((x) => x.name));
  if (!names.size) return [];
  await t.exec('PRAGMA defer_foreign_keys = ON');
  const cascaded: string[] = [];
  for (const table of ordinaryTables(await t.many<MasterRow>(SQLITE_TABLES))) {
    if (names.has(table)) continue;
    const parents = await t.many<{ parent: string }>('SELECT "table" AS parent FROM pragma_foreign_key_list(?)', [table]);
    if (parents.some((p) => names.has(p.parent))) cascaded.push(table);
  }
  for (const table of [...cascaded, ...names]) await emptyTable(t, table);
  for (const table of plan.tables) await insertRows(t, table);
  for (const table of plan.tables) {
    const broken = await t.one<{ parent: string }>('SELECT parent FROM pragma_foreign_key_check(?)', [table.name]);
    if (broken) throw new BadArchive(`table ${table.name}: a row refers to one of ${broken.parent} the backup does not hold`);
  }
  return cascaded.map((c) => `table ${c} was emptied: it refers to restored tables and is not in the backup`);
}

/**
 * Empties a table. Its triggers may reach a virtual table of an extension only its module loads (memory's vec0): with
 * that module disabled the connection lacks it, and the restore is refused naming what to do (409), not failed (500).
 */
async function emptyTable(t: Queries, table: string): Promise<void> {
  try {
    await t.run(`DELETE FROM ${quote(table)}`);
  } catch (err) {
    const missing = /no such module: (\S+)/.exec((err as Error).message);
    if (!missing) throw err;
    throw conflict(
      `table ${table} cannot be emptied: its triggers use the SQLite extension '${missing[1]}', which its module loads and which is ` +
        'not loaded (is the module disabled?): enable it, then restore again',
    );
  }
}

async function insertRows(t: Queries, table: TablePlan): Promise<void> {
  const sql = `INSERT INTO ${quote(table.name)} (${table.columns.map((c) => quote(c.name)).join(', ')}) VALUES (${table.columns.map(() => '?').join(', ')})`;
  let width = -1;
  let rows = 0;
  for (const line of linesSync(table.file)) {
    if (width < 0) {
      width = parseHeader(line, table.name).columns.length;
      continue;
    }
    if (!line) continue;
    const row = parseRow(line, width, table.name);
    const values = table.columns.map((c) => sqliteValue(row[c.at]!, c, table.name));
    await asArchiveError(`table ${table.name}`, () => t.run(sql, values));
    rows++;
  }
  checkRowCount(table, rows);
}

const INTEGER_TYPES = new Set(['bigint', 'integer', 'smallint']);
const FLOAT_TYPES = new Set(['double precision', 'real']);

/** A value's PostgreSQL text form (pg-tables) as the value SQLite stores, read by its archived type. */
function sqliteValue(text: string | null, column: Column, table: string): SqlValue {
  if (text === null) return null;
  if (column.type === 'bytea') return Buffer.from(text, 'base64');
  if (FLOAT_TYPES.has(column.type)) return Number(text);
  if (!INTEGER_TYPES.has(column.type)) return text;
  if (!/^-?\d+$/.test(text)) throw new BadArchive(`table ${table}: column ${column.name} holds '${text}', where ${column.type} is expected`);
  const n = BigInt(text);
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

/** A file's lines read synchronously (see above), a chunk at a time. */
function* linesSync(file: string): Generator<string> {
  const fd = openSync(file, 'r');
  const chunk = Buffer.alloc(1 << 20);
  const decoder = new StringDecoder('utf8');
  let rest = '';
  try {
    for (let read = readSync(fd, chunk); read > 0; read = readSync(fd, chunk)) {
      const parts = (rest + decoder.write(chunk.subarray(0, read))).split('\n');
      rest = parts.pop()!;
      yield* parts;
    }
    rest += decoder.end();
    if (rest) yield rest;
  } finally {
    closeSync(fd);
  }
}

/** Data the schema refuses (a broken key, a NOT NULL, a type a key column refuses) is the archive's fault: a 400. */
async function asArchiveError<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const code = String((err as { code?: unknown }).code ?? '');
    if (code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_MISMATCH') throw new BadArchive(`${what}: ${(err as Error).message}`);
    throw err;
  }
}

/**
 * The database part of a restore on PostgreSQL, from the table files of pg-export. planRestore checks the archive
 * against this database and changes nothing (restore-plan); restoreTables then replaces the tables' rows inside the
 * caller's transaction (which also writes the restore's journal row: one commit point).
 *
 * Not restored: the kernel's tables (the running processes' nodes, change feed and events, and the migration ledger:
 * the schema stays this database's) and the preserved modules' (the audit trail is never rolled back).
 */
import type { Queries } from '@talon/module-sdk';
import type { Manifest } from './components.ts';
import { BadArchive } from './extract.ts';
import { lines, quote, schemaTables, type Column } from './pg-tables.ts';
import { checkRowCount, parseHeader, parseRow, planTables, type RestorePlan, type TablePlan } from './restore-plan.ts';

/** A batch of rows goes to the server as one JSON array parameter: at most this many rows, about this many characters. */
const BATCH_ROWS = 1000;
const BATCH_CHARS = 4 << 20;

/** The plan of the archive's tables: each with this database's columns, which must be the archive's (names and types). */
export async function planRestore(q: Queries, staged: string, manifest: Manifest, preserved: string[]): Promise<RestorePlan> {
  return planTables(q, staged, manifest, preserved, await schemaTables(q), sameColumns);
}

function sameColumns(archived: Column[], live: Column[]): Array<Column & { at: number }> | string {
  const at = new Map(archived.map((c, i) => [c.name, { type: c.type, at: i }]));
  const differs = archived.length !== live.length || live.some((c) => at.get(c.name)?.type !== c.type);
  if (differs) return `has columns (${describe(archived)}), this database's has (${describe(live)})`;
  return live.map((c) => ({ ...c, at: at.get(c.name)!.at }));
}

const describe = (columns: Column[]) => columns.map((c) => `${c.name} ${c.type}`).join(', ');

/**
 * Replaces the planned tables' rows, in the caller's transaction: emptied (identities restarted), the rows inserted in
 * batches, the identity sequences set past the highest value restored. Foreign keys are checked once every table is in
 * (a row may come before the one it refers to, in its own table too): made deferrable for the transaction and set
 * back before it commits. Answers warnings (tables emptied because they refer to restored ones).
 */
export async function restoreTables(t: Queries, plan: RestorePlan): Promise<string[]> {
  const names = plan.tables.map((x) => x.name);
  if (!names.length) return [];
  // The names go as one JSON parameter (the store's values are scalars).
  const list = JSON.stringify(names);
  const cascaded = await t.many<{ name: string }>(
    `SELECT DISTINCT r.relname AS name FROM pg_constraint k JOIN pg_class r ON r.oid = k.conrelid JOIN pg_class f ON f.oid = k.confrelid
      WHERE k.contype = 'f' AND f.relnamespace = current_schema()::regnamespace
        AND f.relname IN (SELECT json_array_elements_text(?::json)) AND r.relname NOT IN (SELECT json_array_elements_text(?::json))`,
    [list, list],
  );
  await t.exec(`TRUNCATE ${names.map(quote).join(', ')} RESTART IDENTITY CASCADE`);
  const keys = await t.many<{ tbl: string; name: string }>(
    `SELECT r.relname AS tbl, k.conname AS name FROM pg_constraint k JOIN pg_class r ON r.oid = k.conrelid
      WHERE k.contype = 'f' AND NOT k.condeferrable AND r.relnamespace = current_schema()::regnamespace
        AND r.relname IN (SELECT json_array_elements_text(?::json))`,
    [list],
  );
  for (const k of keys) await t.exec(`ALTER TABLE ${quote(k.tbl)} ALTER CONSTRAINT ${quote(k.name)} DEFERRABLE`);
  await t.exec('SET CONSTRAINTS ALL DEFERRED');
  for (const table of plan.tables) await insertRows(t, table);
  await asArchiveError('a row refers to one the backup does not hold', () => t.exec('SET CONSTRAINTS ALL IMMEDIATE'));
  for (const k of keys) await t.exec(`ALTER TABLE ${quote(k.tbl)} ALTER CONSTRAINT ${quote(k.name)} NOT DEFERRABLE`);
  for (const table of plan.tables) await resetSequences(t, table.name);
  return cascaded.map((c) => `table ${c.name} was emptied: it refers to restored tables and is not in the backup`);
}

/** The file's rows in batches of one statement each: the server turns the JSON array's texts back into values. */
async function insertRows(t: Queries, table: TablePlan): Promise<void> {
  const values = table.columns.map((c) => (c.type === 'bytea' ? `decode(e->>${c.at}, 'base64')` : `(e->>${c.at})::${c.type}`));
  // OVERRIDING SYSTEM VALUE: identity values are the archived ones, also for a column GENERATED ALWAYS.
  const sql =
    `INSERT INTO ${quote(table.name)} (${table.columns.map((c) => quote(c.name)).join(', ')}) OVERRIDING SYSTEM VALUE ` +
    `SELECT ${values.join(', ')} FROM json_array_elements(?::json) AS e`;
  const insert = (batch: string[]) => asArchiveError(`table ${table.name}`, () => t.run(sql, [`[${batch.join(',')}]`]));
  let width = -1;
  let batch: string[] = [];
  let chars = 0;
  let rows = 0;
  for await (const line of lines(table.file)) {
    if (width < 0) {
      width = parseHeader(line, table.name).columns.length;
      continue;
    }
    if (!line) continue;
    parseRow(line, width, table.name);
    batch.push(line);
    chars += line.length;
    rows++;
    if (batch.length >= BATCH_ROWS || chars >= BATCH_CHARS) {
      await insert(batch);
      batch = [];
      chars = 0;
    }
  }
  if (batch.length) await insert(batch);
  checkRowCount(table, rows);
}

/** Each identity or serial column's sequence continues after the highest value restored (an empty table: from its start). */
async function resetSequences(t: Queries, table: string): Promise<void> {
  const sequences = await t.many<{ col: string; seq: string | null }>(
    `SELECT a.attname AS col, pg_get_serial_sequence(quote_ident(?), a.attname) AS seq FROM pg_attribute a
      WHERE a.attrelid = quote_ident(?)::regclass AND a.attnum > 0 AND NOT a.attisdropped`,
    [table, table],
  );
  for (const s of sequences.filter((x) => x.seq))
    await t.one(`SELECT setval(?::regclass, m) FROM (SELECT max(${quote(s.col)}) AS m FROM ${quote(table)}) AS x WHERE m >= 1`, [s.seq]);
}

/** Data the schema refuses (a bad value, a broken key) is the archive's fault: a 400 naming it, not a 500. */
async function asArchiveError<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const state = String((err as { code?: unknown }).code ?? '');
    if (state.startsWith('22') || state.startsWith('23')) throw new BadArchive(`${what}: ${(err as Error).message}`);
    throw err;
  }
}

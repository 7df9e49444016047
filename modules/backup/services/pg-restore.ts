/**
 * The database part of a restore on PostgreSQL, from the table files of pg-export. planRestore checks the archive
 * against this database and changes nothing; restoreTables then replaces the tables' rows inside the caller's
 * transaction (which also writes the restore's journal row: one commit point).
 *
 * Not restored: the kernel's tables (the running processes' nodes, change feed and events, and the migration ledger:
 * the schema stays this database's) and the preserved modules' (the audit trail is never rolled back).
 */
import path from 'node:path';
import { conflict, type Queries } from '@talon/module-sdk';
import { TABLES_DIR, tablePrefix, type Manifest } from './components.ts';
import { BadArchive } from './extract.ts';
import { lines, quote, schemaTables, type Column, type TableHeader } from './pg-tables.ts';

/** A batch of rows goes to the server as one JSON array parameter: at most this many rows, about this many characters. */
const BATCH_ROWS = 1000;
const BATCH_CHARS = 4 << 20;

export interface TablePlan {
  name: string;
  file: string;
  rows: number;
  /** This database's columns, each with its position in the file's rows. */
  columns: Array<Column & { at: number }>;
}

export interface RestorePlan {
  tables: TablePlan[];
  warnings: string[];
}

const LEDGER = 'kernel_migrations';

/**
 * Finds what can be wrong before anything changes: a table file whose header is not its table's, a schema that is not
 * this database's (the migration ledgers differ for a module both have, or a table's columns differ). Tables of
 * modules not installed here are left out, and tables the backup does not hold are left as they are (both warned).
 */
export async function planRestore(q: Queries, staged: string, manifest: Manifest, preserved: string[]): Promise<RestorePlan> {
  const tables = manifest.database?.tables;
  if (!tables) throw new BadArchive('its manifest does not list the tables of its database');
  const fileOf = (file: string) => path.join(staged, TABLES_DIR, file);
  const ledger = tables.find((t) => t.name === LEDGER);
  if (!ledger) throw new BadArchive('its database is not a Talon database (no migration ledger)');
  await checkLedger(q, fileOf(ledger.file), preserved);

  const skipped = (name: string) => name.startsWith('kernel_') || preserved.some((m) => name.startsWith(tablePrefix(m)));
  const live = await schemaTables(q);
  const plan: RestorePlan = { tables: [], warnings: [] };
  for (const t of tables.filter((x) => !skipped(x.name))) {
    const columns = live.get(t.name);
    if (!columns) {
      plan.warnings.push(`table ${t.name} is not in this database (its module is not installed here): left out`);
      continue;
    }
    const header = await readHeader(fileOf(t.file), t.name);
    const archived = new Map(header.columns.map((c, at) => [c.name, { type: c.type, at }]));
    const differs = header.columns.length !== columns.length || columns.some((c) => archived.get(c.name)?.type !== c.type);
    if (differs)
      throw conflict(
        `the backup's table ${t.name} has columns (${describe(header.columns)}), this database's has (${describe(columns)}): ` +
          'restore it with the version that made it',
      );
    plan.tables.push({ name: t.name, file: fileOf(t.file), rows: t.rows, columns: columns.map((c) => ({ ...c, at: archived.get(c.name)!.at })) });
  }
  const held = new Set(tables.map((t) => t.name));
  for (const name of live.keys()) if (!skipped(name) && !held.has(name)) plan.warnings.push(`table ${name} is not in the backup: left as it is`);
  return plan;
}

const describe = (columns: Column[]) => columns.map((c) => `${c.name} ${c.type}`).join(', ');

/** Every module both ledgers know has the same migrations in both: the tables are the same, so are their meanings. */
async function checkLedger(q: Queries, file: string, preserved: string[]): Promise<void> {
  const archived = new Map<string, string[]>();
  let header: TableHeader | undefined;
  for await (const line of lines(file)) {
    if (!header) {
      header = parseHeader(line, LEDGER);
      continue;
    }
    const row = parseRow(line, header.columns.length, LEDGER);
    const value = (column: string) => row[header!.columns.findIndex((c) => c.name === column)];
    const module = value('module');
    const id = value('id');
    if (typeof module !== 'string' || typeof id !== 'string') throw new BadArchive('its migration ledger has a row without module or id');
    archived.set(module, [...(archived.get(module) ?? []), id].sort());
  }
  const here = new Map<string, string[]>();
  for (const r of await q.many<{ module: string; id: string }>(`SELECT module, id FROM ${LEDGER} ORDER BY module, id`))
    here.set(r.module, [...(here.get(r.module) ?? []), r.id]);
  const differ = [...archived.keys()].filter((m) => !preserved.includes(m) && here.has(m) && archived.get(m)!.join(',') !== here.get(m)!.join(','));
  if (differ.length) {
    const which = differ.map((m) => `${m}: ${archived.get(m)!.at(-1)} in the backup, ${here.get(m)!.at(-1)} here`).join('; ');
    throw conflict(`the backup was made at another schema version (${which}): restore it with the version that made it`);
  }
}

async function readHeader(file: string, table: string): Promise<TableHeader> {
  for await (const line of lines(file)) return parseHeader(line, table);
  throw new BadArchive(`the file of table ${table} is empty`);
}

function parseHeader(line: string, table: string): TableHeader {
  let header: TableHeader;
  try {
    header = JSON.parse(line) as TableHeader;
  } catch {
    throw new BadArchive(`the file of table ${table} does not start with its header`);
  }
  const valid =
    header?.table === table && Array.isArray(header.columns) && header.columns.every((c) => typeof c?.name === 'string' && typeof c.type === 'string');
  if (!valid) throw new BadArchive(`the file of table ${table} does not start with its header`);
  return header;
}

function parseRow(line: string, width: number, table: string): Array<string | null> {
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    row = undefined;
  }
  if (!Array.isArray(row) || row.length !== width || !row.every((v) => v === null || typeof v === 'string'))
    throw new BadArchive(`the file of table ${table} holds a line that is not one of its rows`);
  return row as Array<string | null>;
}

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
  if (rows !== table.rows) throw new BadArchive(`the file of table ${table.name} holds ${rows} rows, its manifest ${table.rows}`);
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

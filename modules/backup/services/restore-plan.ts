/**
 * A PostgreSQL archive's tables checked against this database before anything changes, on either engine (pg-restore,
 * sqlite-restore): a table file whose header is not its table's, a schema that is not this database's (the migration
 * ledgers differ for a module both have, or a table's columns do not match). Tables of modules not installed here are
 * left out, and tables the backup does not hold are left as they are (both warned).
 */
import path from 'node:path';
import { conflict, type Queries } from '@talon/module-sdk';
import { TABLES_DIR, tablePrefix, type Manifest } from './components.ts';
import { BadArchive } from './extract.ts';
import { lines, type Column, type TableHeader } from './pg-tables.ts';

export interface TablePlan {
  name: string;
  file: string;
  rows: number;
  /** The columns restored, each with its position in the file's rows. */
  columns: Array<Column & { at: number }>;
}

export interface RestorePlan {
  tables: TablePlan[];
  warnings: string[];
}

/** How this engine's columns of a table take the archive's: the columns to restore, or why they cannot. */
export type MatchColumns = (archived: Column[], live: Column[]) => Array<Column & { at: number }> | string;

const LEDGER = 'kernel_migrations';

/** The plan of the archive's tables against `live` (this database's tables and columns), matched by `match`. */
export async function planTables(
  q: Queries,
  staged: string,
  manifest: Manifest,
  preserved: string[],
  live: Map<string, Column[]>,
  match: MatchColumns,
): Promise<RestorePlan> {
  const tables = manifest.database?.tables;
  if (!tables) throw new BadArchive('its manifest does not list the tables of its database');
  const fileOf = (file: string) => path.join(staged, TABLES_DIR, file);
  const ledger = tables.find((t) => t.name === LEDGER);
  if (!ledger) throw new BadArchive('its database is not a Talon database (no migration ledger)');
  await checkLedger(q, fileOf(ledger.file), preserved);

  const skipped = (name: string) => name.startsWith('kernel_') || preserved.some((m) => name.startsWith(tablePrefix(m)));
  const plan: RestorePlan = { tables: [], warnings: [] };
  for (const t of tables.filter((x) => !skipped(x.name))) {
    const here = live.get(t.name);
    if (!here) {
      plan.warnings.push(`table ${t.name} is not in this database (its module is not installed here): left out`);
      continue;
    }
    const columns = match((await readHeader(fileOf(t.file), t.name)).columns, here);
    if (typeof columns === 'string') throw conflict(`the backup's table ${t.name} ${columns}: restore it with the version that made it`);
    plan.tables.push({ name: t.name, file: fileOf(t.file), rows: t.rows, columns });
  }
  const held = new Set(tables.map((t) => t.name));
  for (const name of live.keys()) if (!skipped(name) && !held.has(name)) plan.warnings.push(`table ${name} is not in the backup: left as it is`);
  return plan;
}

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

export function parseHeader(line: string, table: string): TableHeader {
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

export function parseRow(line: string, width: number, table: string): Array<string | null> {
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

/** A table file held the rows its manifest counts (a cut or padded file is the archive's fault). */
export function checkRowCount(table: TablePlan, rows: number): void {
  if (rows !== table.rows) throw new BadArchive(`the file of table ${table.name} holds ${rows} rows, its manifest ${table.rows}`);
}

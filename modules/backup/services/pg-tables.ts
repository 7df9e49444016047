/**
 * What the PostgreSQL export and restore share: the schema's tables and columns as the catalogue has them, and the
 * archive's table files. A table file is JSON lines: first a header naming the table and its columns with their types,
 * then one row per line as an array of values in the header's order, each null or the value's PostgreSQL text form
 * (exact for every type, BIGINT past 2^53 included), BYTEA as base64.
 */
import { createReadStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Queries } from '@talon/module-sdk';

/** A quoted identifier (the same in PostgreSQL and SQLite). */
export const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

export interface Column {
  name: string;
  /** format_type(): the type as SQL writes it ('bigint', 'bit varying', 'integer[]'), so `::type` casts back. */
  type: string;
}

export interface TableHeader {
  table: string;
  columns: Column[];
}

/** The table's file in the archive: its name, percent-encoded (never a path, whatever the name holds). */
export const tableFile = (table: string): string => `${encodeURIComponent(table)}.jsonl`;

/**
 * Every ordinary table of the current schema (the kernel's and every module's) with its columns in order. Generated
 * columns are left out: the engine computes them again on insert (memory's tsvector).
 */
export async function schemaTables(q: Queries): Promise<Map<string, Column[]>> {
  const rows = await q.many<{ tbl: string; name: string; type: string }>(
    `SELECT c.relname AS tbl, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
        AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      ORDER BY c.relname, a.attnum`,
  );
  const tables = new Map<string, Column[]>();
  for (const r of rows) {
    const columns = tables.get(r.tbl) ?? [];
    columns.push({ name: r.name, type: r.type });
    tables.set(r.tbl, columns);
  }
  return tables;
}

/** The lines of a table file, one at a time (a table is never read whole). */
export async function* lines(file: string): AsyncGenerator<string> {
  const input = createReadStream(file, { encoding: 'utf8' });
  const reader = createInterface({ input, crlfDelay: Infinity });
  try {
    yield* reader;
  } finally {
    reader.close();
    input.destroy();
  }
}

/** Writes one line of a table file, waiting when the stream asks to. */
export async function writeLine(out: WriteStream, line: string): Promise<void> {
  if (!out.write(`${line}\n`)) await once(out, 'drain');
}

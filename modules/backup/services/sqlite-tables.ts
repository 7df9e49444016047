/** A SQLite database's tables that hold rows of their own, for the conversions between the engines' backups. */

/** The statement that lists a SQLite database's tables with the SQL that made them. */
export const SQLITE_TABLES = `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`;

/** A row of SQLITE_TABLES. */
export interface MasterRow {
  name: string;
  sql: string | null;
}

/** Of SQLITE_TABLES' rows, the names of those that are not a virtual table, nor one of a virtual table's shadow tables. */
export function ordinaryTables(tables: MasterRow[]): string[] {
  const virtual = tables.filter((t) => /^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(t.sql ?? '')).map((t) => t.name);
  return tables.map((t) => t.name).filter((name) => !virtual.some((v) => name === v || name.startsWith(`${v}_`)));
}

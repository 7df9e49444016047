/**
 * The few statement fragments memory needs that differ between engines. FTS5 and sqlite-vec statements live in
 * search.ts and vectors.ts, next to the code that uses them.
 */
import type { Queries } from '@talon/module-sdk';

/**
 * `IN <this>` over one JSON array parameter: one prepared statement whatever the length of the list (an IN list of
 * placeholders would prepare, and cache, one statement per length).
 */
export function jsonList(q: Queries, type: 'integer' | 'text'): string {
  return q.pick({
    sqlite: '(SELECT value FROM json_each(?))',
    postgres: type === 'integer' ? '(SELECT jsonb_array_elements_text(?::jsonb)::bigint)' : '(SELECT jsonb_array_elements_text(?::jsonb))',
  });
}

/** A condition on a JSON-array text column: the array holds the `?` string. */
export function jsonHas(q: Queries, column: string): string {
  return q.pick({
    sqlite: `EXISTS (SELECT 1 FROM json_each(${column}) WHERE value = ?)`,
    postgres: `${column}::jsonb @> jsonb_build_array(?::text)`,
  });
}

/**
 * A statement SQLite has and PostgreSQL does not have yet (FTS5 ranking details, sqlite-vec): the SQLite text, or a
 * clear error on PostgreSQL. The fleet issue builds PostgreSQL search.
 */
export function sqliteOnly(q: Queries, sql: string, what: string): string {
  return q.pick<() => string>({
    sqlite: () => sql,
    postgres: () => {
      throw new Error(`memory: ${what} is not on PostgreSQL yet`);
    },
  })();
}

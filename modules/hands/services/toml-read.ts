/** Typed reads of a parsed TOML table; a wrong type is a DefinitionError naming the key. */
export type Table = Record<string, unknown>;

export class DefinitionError extends Error {}

const fail = (key: string, what: string) => new DefinitionError(`'${key}' must be ${what}`);

export function isTable(v: unknown): v is Table {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

export function table(v: unknown, key: string): Table {
  if (v === undefined) return {};
  if (!isTable(v)) throw fail(key, 'a table');
  return v;
}

export function tables(v: unknown, key: string): Table[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every(isTable)) throw fail(key, 'an array of tables');
  return v;
}

export function str(v: unknown, key: string, fallback = ''): string {
  if (v === undefined) return fallback;
  if (typeof v !== 'string') throw fail(key, 'a string');
  return v;
}

/** Settings defaults and option values: the corpus writes "true", 30 or true alike; all become text. */
export function scalarText(v: unknown, key: string, fallback = ''): string {
  if (v === undefined) return fallback;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  throw fail(key, 'a string, number or boolean');
}

export function strings(v: unknown, key: string): string[] {
  if (v === undefined) return [];
  if (typeof v === 'string') return [v];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw fail(key, 'a list of strings');
  return v as string[];
}

export function num(v: unknown, key: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v !== 'number' || !Number.isFinite(v)) throw fail(key, 'a number');
  return v;
}

export function bool(v: unknown, key: string, fallback = false): boolean {
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw fail(key, 'true or false');
  return v;
}

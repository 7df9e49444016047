import { stringify } from 'smol-toml';

/** TOML has no null: drop null values (and undefined ones) before stringifying. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined).map(withoutNulls);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null && v !== undefined)
        .map(([k, v]) => [k, withoutNulls(v)]),
    );
  }
  return value;
}

export function toToml(config: Record<string, unknown>): string {
  return `${stringify(withoutNulls(config))}\n`;
}

/** A copy of obj with the value at path set (tables created on the way). */
export function setIn(obj: Record<string, unknown>, path: readonly string[], value: unknown): Record<string, unknown> {
  const root = structuredClone(obj ?? {});
  let cur: Record<string, unknown> = root;
  for (const key of path.slice(0, -1)) {
    const next = cur[key];
    if (!next || typeof next !== 'object' || Array.isArray(next)) cur[key] = {};
    cur = cur[key] as Record<string, unknown>;
  }
  cur[path[path.length - 1]] = value;
  return root;
}

/** A value inside nested objects by path segments. */
export function getIn(obj: unknown, segments: readonly string[]): unknown {
  let cur = obj;
  for (const key of segments) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

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

/** A value inside nested objects by path segments. */
export function getIn(obj: unknown, segments: readonly string[]): unknown {
  let cur = obj;
  for (const key of segments) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

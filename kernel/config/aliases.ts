import type { ConfigAlias } from '@talon/module-sdk';

/** A TOML table (a date is an object too, but no table). */
export const isTable = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);

/** Rewrites other accepted spellings to our keys (ours wins); a dotted `to` (`section.key`) is merged key by key. */
export function applyAliases(
  raw: Record<string, unknown>,
  aliases: readonly ConfigAlias[],
  warnings: string[],
): Record<string, unknown> {
  const out = { ...raw };
  for (const { from, to, convert } of aliases) {
    const [head, ...rest] = from.split('.');
    const table = rest.length ? out[head] : out;
    const key = rest.length ? rest.join('.') : head;
    if (!isTable(table) || !(key in table)) continue;
    const { [key]: value, ...left } = table;
    if (!rest.length) delete out[key];
    else if (Object.keys(left).length) out[head] = left;
    else delete out[head];
    const converted = convert ? convert(value) : value;
    if (to.includes('.')) mergeInto(out, from, to, converted, warnings);
    else if (to in out) warnings.push(`both '${from}' and '${to}' are set; using '${to}'`);
    else out[to] = converted;
  }
  return out;
}

/** `to` = 'section.table': the aliased table's keys join it; where both set a key, ours wins. */
function mergeInto(out: Record<string, unknown>, from: string, to: string, value: unknown, warnings: string[]): void {
  const [section, name] = to.split('.', 2);
  const host = isTable(out[section]) ? { ...out[section] } : {};
  const ours = host[name];
  if (ours === undefined) host[name] = value;
  else if (isTable(ours) && isTable(value)) {
    for (const k of Object.keys(value).filter((k) => k in ours))
      warnings.push(`both '${from}.${k}' and '${to}.${k}' are set; using '${to}.${k}'`);
    host[name] = { ...value, ...ours };
  } else warnings.push(`both '${from}' and '${to}' are set; using '${to}'`);
  out[section] = host;
}

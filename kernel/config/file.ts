import { existsSync, readFileSync } from 'node:fs';
import { parse, TomlError } from 'smol-toml';
import type { ConfigAlias } from '@talon/module-sdk';
import { ConfigError } from './errors.ts';

/** Reads and parses config.toml; a missing file is an empty configuration. */
export function readConfigFile(file: string): Record<string, unknown> {
  return existsSync(file) ? parseToml(readFileSync(file, 'utf8'), file) : {};
}

export function parseToml(text: string, file: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TomlError) {
      throw new ConfigError(`${file}: TOML syntax error at line ${err.line}, column ${err.column}: ${err.message.split('\n')[0]}`);
    }
    throw new ConfigError(`${file}: ${(err as Error).message}`);
  }
}

const isTable = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);

/**
 * Rewrites other accepted spellings (the reference system's `listen_addr`, `cors_origin`,
 * `[rate_limit] api_requests_per_minute`...) to our keys. Ours wins when both are set. A dotted `to`
 * (`tools.exec_policy`) names a table inside a section: an aliased table is merged into it key by key.
 */
export function applyAliases(raw: Record<string, unknown>, aliases: readonly ConfigAlias[], warnings: string[]): Record<string, unknown> {
  const out = { ...raw };
  for (const { from, to, convert } of aliases) {
    const [head, ...rest] = from.split('.');
    const table = rest.length ? out[head] : out;
    const key = rest.length ? rest.join('.') : head;
    if (!isTable(table) || !(key in table)) continue;
    const value = table[key];
    if (rest.length) {
      const left = { ...table };
      delete left[key];
      if (Object.keys(left).length) out[head] = left;
      else delete out[head];
    } else delete out[key];
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
    for (const k of Object.keys(value).filter((k) => k in ours)) warnings.push(`both '${from}.${k}' and '${to}.${k}' are set; using '${to}.${k}'`);
    host[name] = { ...value, ...ours };
  } else warnings.push(`both '${from}' and '${to}' are set; using '${to}'`);
  out[section] = host;
}

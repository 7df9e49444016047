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
 * `[rate_limit] api_requests_per_minute`...) to our keys. Ours wins when both are set.
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
    if (to in out) warnings.push(`both '${from}' and '${to}' are set; using '${to}'`);
    else out[to] = convert ? convert(value) : value;
  }
  return out;
}

import { existsSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { parse, stringify, TomlError } from 'smol-toml';
import { ConfigError } from './errors.ts';

export const DEFAULT_CONFIG = `# Talon configuration. Every key is optional. Uncomment a line to change it; the values shown
# are the defaults, except where a line says "example". Reference: docs/configuration.md

# Address the HTTP API listens on.
# api_listen = "127.0.0.1:4545"

# Bearer token for the API. Empty = open API, cross-origin access only from localhost.
# api_key = ""

# Extra origins allowed to call the API from a browser.
# cors_origins = []

# Rate limit: cost units per second per client IP (health costs 1, a message 30).
# rate_limit_per_second = 10

# log_level = "info"

# [default_model]
# provider = "openai"
# model = "gpt-4o-mini"
# api_key_env = "MY_OPENAI_KEY"            # example; default "": a stored key, else the provider's usual variable
# base_url = "https://api.openai.com/v1"   # example; default: the catalogue's URL for the provider

# [provider_urls]
# ollama = "http://127.0.0.1:11434"       # example

# [modules]
# disabled = []          # module names to leave out

# Folders with third-party modules (a folder with module.toml, or a folder of such folders).
# module_paths = []
`;

/** Reads and parses config.toml; writes the commented default file first when there is none. */
export function readConfigFile(file: string): { raw: Record<string, unknown>; text: string } {
  if (!existsSync(file)) writeFileSync(file, DEFAULT_CONFIG, { mode: 0o600 });
  const text = readFileSync(file, 'utf8');
  return { raw: parseToml(text, file), text };
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

/**
 * Accepts the reference system's spellings: `cors_origin`, `listen_addr` and
 * `[rate_limit] api_requests_per_minute`. The spec's key wins when both are set.
 */
export function applyAliases(raw: Record<string, unknown>, warnings: string[]): Record<string, unknown> {
  const out = { ...raw };
  const alias = (from: string, to: string, convert: (v: unknown) => unknown = (v) => v) => {
    if (!(from in out)) return;
    if (to in out) warnings.push(`both '${from}' and '${to}' are set; using '${to}'`);
    else out[to] = convert(out[from]);
    delete out[from];
  };
  alias('cors_origin', 'cors_origins');
  alias('listen_addr', 'api_listen');
  const rl = out.rate_limit;
  if (rl && typeof rl === 'object' && !Array.isArray(rl)) {
    const { api_requests_per_minute: perMinute, ...rest } = rl as Record<string, unknown>;
    if (perMinute !== undefined) {
      if ('rate_limit_per_second' in out)
        warnings.push(`both 'rate_limit.api_requests_per_minute' and 'rate_limit_per_second' are set; using 'rate_limit_per_second'`);
      else out.rate_limit_per_second = typeof perMinute === 'number' ? perMinute / 60 : perMinute;
    }
    if (Object.keys(rest).length === 0) delete out.rate_limit;
    else out.rate_limit = rest;
  }
  return out;
}

/**
 * Writes one value into the file. Keeps the user's comments and layout where
 * the key can be edited in place; otherwise rewrites the file from the data.
 */
export function persistValue(file: string, path: string[], value: unknown): void {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const expected = setIn(parseToml(text, file), path, value);
  const edited = editInPlace(text, path, value);
  let next = edited !== undefined && sameData(safeParse(edited), expected) ? edited : stringify(expected) + '\n';
  if (!next.endsWith('\n')) next += '\n';
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, next, { mode: 0o600 });
  renameSync(tmp, file);
}

export function setIn(obj: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const root = structuredClone(obj);
  let cur: Record<string, unknown> = root;
  for (const key of path.slice(0, -1)) {
    const next = cur[key];
    if (!next || typeof next !== 'object' || Array.isArray(next)) cur[key] = {};
    cur = cur[key] as Record<string, unknown>;
  }
  cur[path[path.length - 1]] = value;
  return root;
}

function editInPlace(text: string, path: string[], value: unknown): string | undefined {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return undefined;
  const key = path[path.length - 1];
  const table = path.slice(0, -1).join('.');
  const line = stringify({ [key]: value }).trim();
  if (line.includes('\n')) return undefined;
  const lines = text.split('\n');
  const headerRe = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/;
  let current = '';
  let tableStart = table === '' ? 0 : -1;
  let tableEnd = lines.length;
  for (let i = 0; i < lines.length; i++) {
    const m = headerRe.exec(lines[i]);
    if (m) {
      if (current === table && tableStart !== -1 && i >= tableStart) {
        tableEnd = i;
        break;
      }
      current = m[1].replace(/\s+/g, '');
      if (current === table) tableStart = i + 1;
      continue;
    }
    if (current === table && new RegExp(`^\\s*${escapeRe(key)}\\s*=`).test(lines[i])) {
      lines[i] = line;
      return lines.join('\n');
    }
  }
  if (tableStart === -1) return `${text.replace(/\n*$/, '\n')}\n[${table}]\n${line}\n`;
  // Insert after the last non-blank line of the table (top level: before the first header).
  let at = tableEnd;
  while (at > tableStart && lines[at - 1].trim() === '') at--;
  lines.splice(at, 0, line);
  return lines.join('\n');
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function safeParse(text: string): unknown {
  try {
    return parse(text);
  } catch {
    return undefined;
  }
}

function sameData(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'smol-toml';
import { setIn } from './toml.ts';

/**
 * Writes one value into config.toml. Keeps the user's comments and layout where the key can be edited in
 * place; otherwise rewrites the file from the data. The write is atomic (temporary file, then rename).
 */
export function persistValue(file: string, path: string[], value: unknown): void {
  const text = readText(file);
  const expected = setIn(safeParse(text) as Record<string, unknown>, path, value);
  const edited = editInPlace(text, path, value);
  let next = edited !== undefined && sameData(safeParse(edited), expected) ? edited : stringify(expected) + '\n';
  if (!next.endsWith('\n')) next += '\n';
  writeAtomically(file, next);
}

/** The file's text ('' when there is none). */
export const readText = (file: string): string => (existsSync(file) ? readFileSync(file, 'utf8') : '');

/** Replaces the file in one step (temporary file, then rename), readable by its owner only. */
export function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
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
    return {};
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

/**
 * The config component. Secrets never go into an archive (a backup copied elsewhere reveals nothing),
 * and a restore keeps the secrets the service has now: the archived file's other values, the current
 * secret values.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'smol-toml';
import { isSecretKey } from '@talon/module-sdk';

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** The data without secret values (at any depth). */
export function withoutSecrets(data: Table): Table {
  const out: Table = {};
  for (const [k, v] of Object.entries(data)) {
    if (isSecretKey(k) && typeof v === 'string' && v !== '') continue;
    out[k] = isTable(v) ? withoutSecrets(v) : v;
  }
  return out;
}

/** The restored data with the current file's secret values put back where they were. */
export function withCurrentSecrets(restored: Table, current: Table): Table {
  const out: Table = { ...restored };
  for (const [k, v] of Object.entries(current)) {
    if (isSecretKey(k) && typeof v === 'string' && v !== '') out[k] = v;
    else if (isTable(v)) out[k] = withCurrentSecrets(isTable(out[k]) ? (out[k] as Table) : {}, v);
  }
  // Tables that only held secrets stay away when the restored file had none of them.
  for (const [k, v] of Object.entries(out)) if (isTable(v) && !Object.keys(v).length && !(k in restored)) delete out[k];
  return out;
}

export const configText = (data: Table): string => `# config.toml from a Talon backup (secret values left out)\n${stringify(data)}\n`;
export const parseConfig = (text: string): Table => parse(text) as Table;

/** Atomic replacement: a crash leaves the old file or the new one. */
export function writeConfig(file: string, data: Table): void {
  const tmp = `${file}.restore.tmp`;
  writeFileSync(tmp, stringify(data) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * Reading catalogue data: provider files (TOML), alias files, and validation
 * of already-parsed provider objects (registry bundles). Every problem is
 * reported with the file it came from.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { parse } from 'smol-toml';
import { aliasFileSchema, providerFileSchema, type AliasFile, type ProviderFile } from './schema.ts';

// No meta-schema check of our own two schemas (their tests cover them): compiling the meta-schema cost ~35 ms of every start.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, validateSchema: false });
const validateProvider = ajv.compile<ProviderFile>(providerFileSchema);
const validateAliases = ajv.compile<AliasFile>(aliasFileSchema);

function describe(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 5)
    .map((e) => {
      const extra = 'additionalProperty' in e.params ? ` '${String(e.params.additionalProperty)}'` : '';
      return `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${extra}`;
    })
    .join('; ');
}

/** Validates a parsed provider file (defaults applied in place); throws naming the source. */
export function checkProviderFile(data: unknown, source: string): ProviderFile {
  if (!validateProvider(data)) throw new Error(`${source}: ${describe(validateProvider.errors)}`);
  for (const [list, what] of [
    [data.models, 'model'],
    [data.media_models, 'media model'],
  ] as const) {
    const seen = new Set<string>();
    for (const m of list) {
      if (seen.has(m.id)) throw new Error(`${source}: ${what} '${m.id}' is listed twice`);
      seen.add(m.id);
    }
  }
  return data;
}

function parseToml(file: string): unknown {
  try {
    return parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message.split('\n')[0]}`);
  }
}

export interface LoadedDir {
  files: ProviderFile[];
  /** One line per rejected file. */
  errors: string[];
}

/** Every *.toml of a folder, in name order; a missing folder is empty. Bad files are reported and skipped. */
export function loadProviderDir(dir: string): LoadedDir {
  const out: LoadedDir = { files: [], errors: [] };
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.toml'))
    .sort()) {
    const file = path.join(dir, name);
    try {
      out.files.push(checkProviderFile(parseToml(file), file));
    } catch (err) {
      out.errors.push((err as Error).message);
    }
  }
  return out;
}

/** An aliases.toml ([aliases] alias = "model-id"); a missing file is empty. */
export function loadAliasFile(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  const data = parseToml(file);
  if (!validateAliases(data)) throw new Error(`${file}: ${describe(validateAliases.errors)}`);
  return data.aliases;
}

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Writes modules (a map of relative file → text per module) into a temporary module_paths folder. */
export function tempModules(modules: Record<string, Record<string, string>>): {
  root: string;
  write(module: string, file: string, text: string): void;
  remove(): void;
} {
  const root = mkdtempSync(path.join(tmpdir(), 'talon-mods-'));
  const write = (module: string, file: string, text: string) => {
    const target = path.join(root, module, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, text);
  };
  for (const [module, files] of Object.entries(modules)) for (const [file, text] of Object.entries(files)) write(module, file, text);
  return { root, write, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** A module.toml from its fields. */
export function manifest(fields: Record<string, unknown>): string {
  return Object.entries({ version: '1.0.0', ...fields })
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
    .join('\n');
}

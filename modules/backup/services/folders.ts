/**
 * Moving restored folders (and the config) into place, step by step so that running it again after a
 * crash finishes the job: each component is either still in the staging folder or already in place.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_ENTRY, FOLDERS, isFolder } from './components.ts';
import { parseConfig, withCurrentSecrets, writeConfig } from './config-file.ts';

export interface Pending {
  id: string;
  staging: string;
  components: string[];
}

/** Puts one folder component in place: the current folder goes to staging/old, the restored one takes its place. */
function placeFolder(home: string, staging: string, component: keyof typeof FOLDERS): void {
  const restored = path.join(staging, 'files', component);
  if (!existsSync(restored)) return;
  const target = path.join(home, FOLDERS[component].dir);
  if (existsSync(target)) {
    const old = path.join(staging, 'old', component);
    mkdirSync(path.dirname(old), { recursive: true });
    rmSync(old, { recursive: true, force: true });
    renameSync(target, old);
  }
  mkdirSync(path.dirname(target), { recursive: true });
  renameSync(restored, target);
}

/** Writes the restored config.toml (with the current secrets); answers its data when it was written now. */
function placeConfig(staging: string, configFile: string, current: () => Record<string, unknown>): Record<string, unknown> | undefined {
  const restored = path.join(staging, 'files', CONFIG_ENTRY);
  if (!existsSync(restored)) return undefined;
  const data = withCurrentSecrets(parseConfig(readFileSync(restored, 'utf8')), current());
  writeConfig(configFile, data);
  rmSync(restored);
  return data;
}

export function applyPending(
  pending: Pending,
  home: string,
  config: { file: string; current: () => Record<string, unknown> },
): { config?: Record<string, unknown> } {
  let written: Record<string, unknown> | undefined;
  for (const c of pending.components) {
    if (isFolder(c)) placeFolder(home, pending.staging, c);
    else if (c === 'config') written = placeConfig(pending.staging, config.file, config.current);
  }
  return { config: written };
}

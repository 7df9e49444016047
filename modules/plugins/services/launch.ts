/**
 * How one hook process starts: the argv (isolation prefix, launcher, script) and its environment — cleared, then
 * PATH and the locale, a private temporary folder as HOME and TMPDIR, the plugin's resolved [config] as a JSON file,
 * the plugin's declared [env], and where it cannot be enforced, advisory markers (no network, read-only files).
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { HookName } from '@talon/plugins';
import { isolationPrefix, type Isolation } from './isolation.ts';
import type { LoadedPlugin } from './store.ts';
import { RUNTIME_SPECS } from './runtimes.ts';

export interface Launch {
  argv: string[];
  /** The private folder: cwd, HOME and TMPDIR (removed by the caller after the process ends). */
  dir: string;
  passthrough: string[];
  env: Record<string, string>;
}

export const PASSTHROUGH = ['PATH', 'LANG', 'LC_ALL', 'TZ'];

export function launch(
  plugin: LoadedPlugin,
  hook: HookName,
  options: { isolation: Isolation; runRoot: string; agentId?: string; persistent?: boolean },
): Launch {
  const m = plugin.manifest!;
  const script = path.join(plugin.dir, m.hooks[hook]!);
  const spec = RUNTIME_SPECS[plugin.runtime];
  const launcher = plugin.launcher === null ? [] : [plugin.launcher, ...spec.args];
  const dir = mkdtempSync(path.join(options.runRoot, `${plugin.name}-`));
  const configFile = path.join(dir, 'plugin-config.json');
  writeFileSync(configFile, JSON.stringify(Object.fromEntries(Object.entries(m.config).map(([k, v]) => [k, v.default]))));
  const env: Record<string, string> = {
    TMPDIR: dir,
    TMP: dir,
    TEMP: dir,
    TALON_PLUGIN: plugin.name,
    TALON_PLUGIN_DIR: plugin.dir,
    TALON_HOOK: hook,
    TALON_RUNTIME: plugin.runtime,
    TALON_PLUGIN_CONFIG: configFile,
    LIBREFANG_PLUGIN_CONFIG: configFile,
    LIBREFANG_RUNTIME: plugin.runtime,
    PYTHONDONTWRITEBYTECODE: '1',
  };
  if (options.agentId) env.TALON_AGENT_ID = env.LIBREFANG_AGENT_ID = options.agentId;
  if (options.persistent) env.TALON_PLUGIN_PERSISTENT = '1';
  if (!m.allowNetwork) env.NO_PROXY = env.no_proxy = '*';
  if (!m.allowFilesystem) env.TALON_READONLY_FS = env.LIBREFANG_READONLY_FS = '1';
  const deps = path.join(plugin.dir, '.deps');
  if (existsSync(deps)) env.PYTHONPATH = deps;
  const modules = path.join(plugin.dir, 'node_modules');
  if (existsSync(modules)) env.NODE_PATH = modules;
  return {
    argv: [...isolationPrefix(options.isolation, m.allowNetwork), ...launcher, script],
    dir,
    passthrough: PASSTHROUGH,
    env: { ...env, ...m.env },
  };
}

/** Where the homes of the systems we import from live: their environment overrides first, then the defaults. */
import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const SOURCES = ['librefang', 'openfang', 'openclaw'] as const;
export type Source = (typeof SOURCES)[number];

const CANDIDATES: Record<Source, (env: NodeJS.ProcessEnv, home: string) => Array<string | undefined>> = {
  librefang: (env, home) => [env.LIBREFANG_HOME, path.join(home, '.librefang')],
  openfang: (env, home) => [env.OPENFANG_HOME, path.join(home, '.openfang')],
  openclaw: (env, home) => [env.OPENCLAW_STATE_DIR, env.OPENCLAW_HOME, path.join(home, '.openclaw'), path.join(home, '.clawdbot')],
};

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

export function detect(env: NodeJS.ProcessEnv = process.env): Array<{ source: Source; path: string }> {
  const home = os.homedir();
  const found: Array<{ source: Source; path: string }> = [];
  for (const source of SOURCES) {
    const dir = CANDIDATES[source](env, home).find((p): p is string => Boolean(p?.trim()) && isDir(path.resolve(p!)));
    if (dir) found.push({ source, path: path.resolve(dir) });
  }
  return found;
}

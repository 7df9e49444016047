import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** A program found stays found; a miss is looked for again after this long (an `apt install` counts without a restart). */
const MISS_TTL_MS = 60_000;

/** Looked-up paths by PATH and program: the PATH is part of the key, so a test that empties it really finds nothing. */
const found = new Map<string, { path: string | undefined; at: number }>();

/** The path of a host program (flite, ffmpeg, ffprobe, pocketsphinx_continuous) on PATH, looked up once per PATH. */
export function which(program: string): string | undefined {
  const dirs = process.env.PATH ?? '';
  const key = `${dirs}\0${program}`;
  const known = found.get(key);
  if (known && (known.path !== undefined || Date.now() - known.at < MISS_TTL_MS)) return known.path;
  const hit = lookup(program, dirs);
  found.set(key, { path: hit, at: Date.now() });
  return hit;
}

function lookup(program: string, dirs: string): string | undefined {
  // A name with a slash is a path already (an operator's override); only bare names are searched.
  if (program.includes('/')) return isExecutable(program) ? program : undefined;
  for (const dir of dirs.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

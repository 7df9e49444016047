/** A bounded copy of a plugin folder: regular files and folders only (a link is refused), within count and size. */
import { chmodSync, copyFileSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';

export class TreeError extends Error {}

const SKIPPED = new Set(['.git', 'node_modules', '.deps', '__pycache__']);

export function checkedCopy(from: string, to: string, limits: { maxFiles: number; maxBytes: number }): void {
  let files = 0;
  let bytes = 0;
  const walk = (src: string, dest: string) => {
    mkdirSync(dest, { recursive: true });
    for (const name of readdirSync(src)) {
      if (SKIPPED.has(name)) continue;
      const s = path.join(src, name);
      const st = lstatSync(s);
      if (st.isSymbolicLink()) throw new TreeError(`'${path.relative(from, s)}' is a symbolic link`);
      if (st.isDirectory()) walk(s, path.join(dest, name));
      else if (st.isFile()) {
        files++;
        bytes += st.size;
        if (files > limits.maxFiles) throw new TreeError(`more than ${limits.maxFiles} files`);
        if (bytes > limits.maxBytes) throw new TreeError(`larger than ${limits.maxBytes} bytes`);
        copyFileSync(s, path.join(dest, name));
        // copyFileSync keeps the mode bits on Linux; set them anyway: native hooks are programs.
        chmodSync(path.join(dest, name), st.mode & 0o777);
      } else throw new TreeError(`'${path.relative(from, s)}' is not a regular file`);
    }
  };
  walk(from, to);
}

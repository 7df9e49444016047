/**
 * Skill folders on disk: listing (symlinks never followed), the supporting files per linked folder, the text
 * files a scan reads, and the checked copy every install makes (no links, no special files, no `.pth`
 * interpreter hooks, bounded count and size).
 */
import { copyFileSync, lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const LINKED_FOLDERS = ['references', 'templates', 'scripts', 'assets'] as const;
const SKIP = new Set(['.git', 'node_modules', '.DS_Store']);

export interface Limits {
  maxFiles: number;
  maxBytes: number;
}

export class TreeError extends Error {}

/** Regular files under dir (relative paths, '/' separated, sorted); symlinks and special files are skipped. */
export function listFiles(dir: string, limits?: Limits): Array<{ rel: string; size: number }> {
  const out: Array<{ rel: string; size: number }> = [];
  let bytes = 0;
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      if (SKIP.has(name)) continue;
      const childAbs = path.join(abs, name);
      const childRel = rel ? `${rel}/${name}` : name;
      const st = lstatSync(childAbs);
      if (st.isDirectory()) walk(childAbs, childRel);
      else if (st.isFile()) {
        out.push({ rel: childRel, size: st.size });
        bytes += st.size;
        if (limits && out.length > limits.maxFiles) throw new TreeError(`more than ${limits.maxFiles} files`);
        if (limits && bytes > limits.maxBytes) throw new TreeError(`larger than ${limits.maxBytes} bytes`);
      }
    }
  };
  walk(dir, '');
  return out;
}

/** The supporting files of each linked folder that exists. */
export function linkedFiles(dir: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const folder of LINKED_FOLDERS) {
    try {
      if (lstatSync(path.join(dir, folder)).isDirectory()) out[folder] = listFiles(path.join(dir, folder)).map((f) => f.rel);
    } catch {
      // the folder is absent
    }
  }
  return out;
}

/** The text files of a skill (a NUL byte marks binary), as the scanner reads them. */
export function textFiles(dir: string, maxFileBytes: number): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const f of listFiles(dir)) {
    if (f.size > maxFileBytes) continue;
    const buf = readFileSync(path.join(dir, f.rel));
    if (!buf.includes(0)) out.push({ path: f.rel, text: buf.toString('utf8') });
  }
  return out;
}

/** Copies src into the empty folder dest, refusing what must never be installed. */
export function checkedCopy(src: string, dest: string, limits: Limits): void {
  let files = 0;
  let bytes = 0;
  const walk = (from: string, to: string, rel: string) => {
    mkdirSync(to, { recursive: true });
    for (const name of readdirSync(from)) {
      if (name === '.git') continue;
      const abs = path.join(from, name);
      const where = rel ? `${rel}/${name}` : name;
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) throw new TreeError(`'${where}' is a symbolic link (skills may not contain links)`);
      if (st.isDirectory()) walk(abs, path.join(to, name), where);
      else if (!st.isFile()) throw new TreeError(`'${where}' is not a regular file`);
      else {
        if (name.endsWith('.pth')) throw new TreeError(`'${where}' is a Python .pth file (runs code at interpreter start)`);
        files++;
        bytes += st.size;
        if (files > limits.maxFiles) throw new TreeError(`the skill has more than ${limits.maxFiles} files`);
        if (bytes > limits.maxBytes) throw new TreeError(`the skill is larger than ${limits.maxBytes} bytes`);
        copyFileSync(abs, path.join(to, name));
      }
    }
  };
  walk(src, dest, '');
}

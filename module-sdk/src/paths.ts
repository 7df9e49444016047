import { realpathSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { badRequest } from './errors.ts';

/**
 * Joins a client-supplied relative path onto root and refuses anything that
 * escapes it: absolute paths, `..` segments, NUL bytes, and symlinks (in any
 * existing ancestor) that point outside root. Returns the absolute path.
 */
export function safeJoin(root: string, relative: string): string {
  if (typeof relative !== 'string' || relative.length === 0) throw badRequest('path must be a non-empty string');
  if (relative.includes('\0')) throw badRequest('path must not contain NUL bytes');
  if (path.isAbsolute(relative) || /^[a-zA-Z]:[\\/]/.test(relative)) throw badRequest(`path '${relative}' must be relative`);
  const parts = relative.split(/[\\/]+/);
  if (parts.includes('..')) throw badRequest(`path '${relative}' must not contain '..'`);
  const realRoot = realpathSync(root);
  const target = path.resolve(realRoot, relative);
  if (!isInside(realRoot, target)) throw badRequest(`path '${relative}' escapes the root`);
  // Walk existing ancestors: a symlink anywhere on the way must stay inside root.
  let probe = target;
  while (probe !== realRoot) {
    if (exists(probe)) {
      const real = realpathSync(probe);
      if (!isInside(realRoot, real)) throw badRequest(`path '${relative}' leads outside the root through a symlink`);
      break;
    }
    probe = path.dirname(probe);
  }
  return target;
}

export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

import path from 'node:path';
import { isInside } from '@talon/module-sdk';
import { canonicalDir } from './shadow.ts';

/** The tools whose calls are snapshotted. */
export const SNAPSHOT_TOOLS: ReadonlySet<string> = new Set(['file_write', 'apply_patch']);

/** Folder names never tracked, wherever they appear in a path (spec "Limits"). */
const EXCLUDED_DIRS: ReadonlySet<string> = new Set(['node_modules', 'target', '.venv', 'venv', 'env', '.git', '__pycache__', 'dist', 'build']);

/** Files one tool call is about to write, grouped by the working directory they belong to. */
export interface TargetGroup {
  workDir: string;
  /** Paths relative to workDir, in the order the call names them. */
  paths: string[];
}

/** The raw target paths a call names (as the model wrote them); `patchPaths` reads an apply_patch text. */
export function toolPaths(tool: string, input: Record<string, unknown>, patchPaths: (patch: string) => string[]): string[] {
  if (tool === 'file_write') return typeof input.path === 'string' && input.path ? [input.path] : [];
  if (tool === 'apply_patch') return typeof input.patch === 'string' ? patchPaths(input.patch) : [];
  return [];
}

/**
 * Which working directory a target belongs to:
 * - a relative path, or an absolute one inside the workspace → the workspace;
 * - an absolute path outside the workspace (a wider root the manifest allows)
 *   → the folder that holds the target;
 * - a relative path escaping the workspace with `..`, or the workspace itself
 *   → none (the tool refuses it).
 * Paths under an excluded folder (anywhere below the working directory for
 * workspace files, anywhere in the absolute path for outside files) are dropped.
 */
export function groupTargets(workspace: string, rawPaths: readonly string[]): TargetGroup[] {
  const root = canonicalDir(workspace);
  // The workspace as given and as canonical: an absolute target may use either spelling.
  const spellings = [...new Set([path.resolve(workspace), root])];
  const groups = new Map<string, string[]>();
  for (const raw of rawPaths) {
    if (raw.includes('\0')) continue;
    const absolute = path.isAbsolute(raw) ? path.resolve(raw) : path.resolve(root, raw);
    if (spellings.includes(absolute)) continue;
    const base = spellings.find((s) => isInside(s, absolute));
    let target: { workDir: string; relative: string; checked: string };
    if (base) {
      const relative = path.relative(base, absolute);
      target = { workDir: root, relative, checked: relative };
    } else if (path.isAbsolute(raw) && absolute !== path.dirname(absolute)) {
      target = { workDir: canonicalDir(path.dirname(absolute)), relative: path.basename(absolute), checked: absolute };
    } else {
      continue;
    }
    if (isExcluded(target.checked)) continue;
    const list = groups.get(target.workDir) ?? [];
    if (!list.includes(target.relative)) list.push(target.relative);
    groups.set(target.workDir, list);
  }
  return [...groups].map(([workDir, paths]) => ({ workDir, paths }));
}

/** True when a folder of the path is an excluded one (or the file is named `.git`, which git refuses). */
export function isExcluded(filePath: string): boolean {
  const segments = filePath.split(path.sep);
  return segments.at(-1) === '.git' || segments.slice(0, -1).some((segment) => EXCLUDED_DIRS.has(segment));
}

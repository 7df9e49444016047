/**
 * Contract of the tools module: what other modules may reuse of the built-in
 * tools (the checkpoints module reads which files an apply_patch call touches).
 */
import { parsePatch } from './services/patch.ts';

/**
 * The paths an apply_patch text names (both ends of a move), in order; none
 * for a patch that does not parse (the tool then fails without writing).
 */
export function patchPaths(patch: string): string[] {
  try {
    return parsePatch(patch).flatMap((op) => (op.kind === 'update' && op.moveTo ? [op.path, op.moveTo] : [op.path]));
  } catch {
    return [];
  }
}

import type { PatchService } from '@talon/tools';
import { parsePatch } from './patch.ts';

/** The tools.patch service: what an apply_patch call will touch, read with the tool's own parser. */
export const patchPaths: PatchService = {
  paths(patch) {
    try {
      return parsePatch(patch).flatMap((op) => (op.kind === 'update' && op.moveTo ? [op.path, op.moveTo] : [op.path]));
    } catch {
      return [];
    }
  },
};

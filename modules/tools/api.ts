/**
 * Contract of the tools module: what other modules may reuse of the built-in
 * tools (the checkpoints module reads which files an apply_patch call touches).
 */
import { serviceRef } from '@talon/module-sdk';

/** The apply_patch format as the apply_patch tool reads it. */
export interface PatchService {
  /**
   * The paths an apply_patch text names (both ends of a move), in order; none
   * for a patch that does not parse (the tool then fails without writing).
   */
  paths(patch: string): string[];
}

export const patchService = serviceRef<PatchService>('tools.patch');

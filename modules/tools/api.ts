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

/** The [tools.invoke] / [tool_invoke] gate of direct invocation, for other front doors to tools (the MCP server). */
export interface InvokeGate {
  /** The refusal text, or undefined when direct invocation may run the tool (canonical name). */
  refusal(tool: string): string | undefined;
}

export const invokeGate = serviceRef<InvokeGate>('tools.invoke-gate');

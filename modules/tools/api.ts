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

/** The subprocess sandbox (security system subprocess_sandbox), for modules that run programs (skill scripts). */
export interface SandboxRun {
  /** A command line for /bin/sh -c (quote every argument). */
  command: string;
  cwd: string;
  /** Names copied from the service's environment; everything else is dropped (PATH defaults, HOME = cwd). */
  envPassthrough: readonly string[];
  /** Extra variables set as given (after the passthrough). */
  env?: Readonly<Record<string, string>>;
  /** Written to the program's standard input, which is then closed (none: stdin is /dev/null). */
  stdin?: string;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Kill the program as soon as its stdout passes maxOutputBytes (default: keep reading, drop the rest). */
  killOnOverflow?: boolean;
  /** False: the program gets no network (an empty network namespace, where the machine offers namespaces). Default true. */
  network?: boolean;
  signal?: AbortSignal;
}

export interface SandboxOutcome {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  aborted: boolean;
}

export interface SandboxService {
  /**
   * Runs in its own PID namespace where the machine offers one (else its own process group, plus a /proc walk for
   * descendants that left it); everything the program started is killed at the end, on timeout and on abort.
   */
  run(request: SandboxRun): Promise<SandboxOutcome>;
}

export const sandboxService = serviceRef<SandboxService>('tools.sandbox');

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

/** A long-lived program in the sandbox (a channel sidecar): its streams stay open, it runs until it exits or is killed. */
export interface SandboxStart {
  /** The program and its arguments (no shell). */
  argv: readonly string[];
  cwd: string;
  /** Names copied from the service's environment; everything else is dropped (PATH defaults, HOME = cwd). */
  envPassthrough: readonly string[];
  env?: Readonly<Record<string, string>>;
  /** False: no network (where the machine offers namespaces). Default true. */
  network?: boolean;
}

export interface SandboxProcess {
  pid: number | undefined;
  stdin: NodeJS.WritableStream;
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
  /** Settles when the program ended (`error`: it could not be started); everything it started is killed then. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: string }>;
  /** Sends a signal to the program's process group (SIGTERM for a graceful stop). */
  signal(signal: NodeJS.Signals): void;
  /** Kills the program and everything it started; resolves once it has exited. */
  kill(): Promise<void>;
}

export interface SandboxService {
  /** Starts a long-lived program under the same isolation as `run`, with its standard streams open to the caller. */
  start(request: SandboxStart): Promise<SandboxProcess>;
  /**
   * Runs in its own PID namespace where the machine offers one (else its own process group, plus a /proc walk for
   * descendants that left it); everything the program started is killed at the end, on timeout and on abort.
   */
  run(request: SandboxRun): Promise<SandboxOutcome>;
}

export const sandboxService = serviceRef<SandboxService>('tools.sandbox');

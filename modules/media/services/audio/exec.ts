import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mediaError } from '../kit/errors.ts';

export interface RunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** The most stdout kept; more is an error (a runaway program). */
  maxOutputBytes?: number;
}

export interface RunResult {
  /** The exit code; null when the program died of a signal. */
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/**
 * Runs a host program without a shell (arguments are never parsed), killed with SIGKILL when the time is up or the
 * signal aborts. A non-zero exit is returned for the caller to judge; a timeout is an `outage`, an abort rethrows
 * the signal's reason.
 */
export function run(program: string, args: string[], options: RunOptions): Promise<RunResult> {
  const { timeoutMs, signal, maxOutputBytes = 64 * 1024 * 1024 } = options;
  return new Promise((resolve, reject) => {
    execFile(
      program,
      args,
      { encoding: 'buffer', timeout: timeoutMs, killSignal: 'SIGKILL', signal, maxBuffer: maxOutputBytes, windowsHide: true },
      (err, stdout, stderr) => {
        const text = stderr.toString('utf8');
        if (!err) return resolve({ code: 0, stdout, stderr: text });
        if (signal?.aborted) return reject(signal.reason);
        const failure = err as NodeJS.ErrnoException & { code?: number | string; killed?: boolean; signal?: string };
        if (failure.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
          return reject(mediaError('outage', `${path.basename(program)} wrote more than ${maxOutputBytes} bytes`));
        }
        if (failure.killed && failure.signal === 'SIGKILL') {
          return reject(mediaError('outage', `${path.basename(program)} did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped`));
        }
        if (typeof failure.code === 'number') return resolve({ code: failure.code, stdout, stderr: text });
        // Not started (ENOENT after the program was removed) or killed by a signal of someone else's.
        reject(mediaError('outage', `${path.basename(program)} failed: ${failure.code ?? failure.signal ?? failure.message}`));
      },
    );
  });
}

/** run() for a program whose every failure is one (the kit's `run`): its stdout, or an `outage` naming it and why. */
export async function runChecked(program: string, args: string[], options: RunOptions): Promise<Buffer> {
  const result = await run(program, args, options);
  if (result.code === 0) return result.stdout;
  throw mediaError('outage', `${path.basename(program)} failed (exit code ${result.code}): ${lastLine(result.stderr)}`);
}

/** The last meaningful line a program wrote to stderr: enough to say why, short enough for an error message. */
export function lastLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return (lines.at(-1) ?? 'no message').slice(0, 300);
}

/** A private temporary folder for one call, removed afterwards whatever happens. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'talon-media-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

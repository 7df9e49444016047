import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { MediaDriverKit } from '@talon/media';

/**
 * Runs one of the host's engines (flite, pocketsphinx) without a shell, killed with SIGKILL when its time is up or
 * the caller gives up. A timeout, a non-zero exit or a missing program is an `outage` naming the program and its last
 * line of complaint; an abort rethrows the signal's reason. Returns what it wrote to stdout.
 */
export function runEngine(kit: MediaDriverKit, program: string, args: string[], options: { timeoutMs: number; signal: AbortSignal }): Promise<string> {
  const name = path.basename(program);
  return new Promise((resolve, reject) => {
    execFile(
      program,
      args,
      { timeout: options.timeoutMs, killSignal: 'SIGKILL', signal: options.signal, maxBuffer: 16 * 1024 * 1024, windowsHide: true },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        if (options.signal.aborted) return reject(options.signal.reason);
        const failure = err as Error & { killed?: boolean; code?: number | string };
        const why =
          failure.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER'
            ? 'it wrote too much'
            : failure.killed
              ? `did not finish within ${Math.round(options.timeoutMs / 1000)} s`
              : lastLine(stderr) || String(failure.code ?? failure.message);
        reject(kit.error('outage', `${name} failed: ${why}`, { provider: 'local' }));
      },
    );
  });
}

const lastLine = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1)
    ?.slice(0, 300);

/** A private temporary folder for one call, removed afterwards whatever happens. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'talon-media-local-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

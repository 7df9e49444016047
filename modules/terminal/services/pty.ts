/**
 * node-pty, loaded on first use: it is a native addon (an optional dependency built at install), so a machine
 * without it still runs the service and the terminal answers 501 saying why.
 */
import { createRequire } from 'node:module';
import path from 'node:path';

/** The part of node-pty's IPty this module uses. */
export interface Pty {
  readonly pid: number;
  onData(listener: (data: string) => void): { dispose(): void };
  onExit(listener: (e: { exitCode: number; signal?: number }) => void): { dispose(): void };
  write(data: string): void;
  resize(cols: number, rows: number): void;
  kill(signal?: string): void;
}

interface PtyModule {
  spawn(file: string, args: string[], options: { name: string; cols: number; rows: number; cwd: string; env: NodeJS.ProcessEnv }): Pty;
}

export function loadPty(moduleDir: string): { pty?: PtyModule; reason?: string } {
  try {
    return { pty: createRequire(path.join(moduleDir, 'index.ts'))('node-pty') as PtyModule };
  } catch (err) {
    return { reason: `node-pty is not available (${(err as Error).message.split('\n')[0]}); install it with npm install node-pty (a native build)` };
  }
}

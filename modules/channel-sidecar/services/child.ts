/**
 * One run of the sidecar program: its stdout split into frames, its stderr into log lines (secrets redacted), its
 * stdin written frame by frame, and the polite stop the reference does: `shutdown`, then SIGTERM to the process
 * group, then SIGKILL of everything it started, within the grace period.
 */
import type { SandboxProcess } from '@talon/tools';
import { encode, parseEvent, type SidecarCommand, type SidecarEvent } from './frames.ts';

/** A longer line is no frame of this protocol: it is dropped rather than buffered without end. */
const MAX_LINE = 1 << 20;

export class LineSplitter {
  private partial = '';
  private overflow = false;

  constructor(private readonly line: (text: string) => void) {}

  push(chunk: string): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop() ?? '';
    for (const part of parts) {
      if (!this.overflow) this.line(part.replace(/\r$/, ''));
      this.overflow = false;
    }
    if (this.partial.length > MAX_LINE) {
      this.partial = '';
      this.overflow = true;
    }
  }
}

export interface ChildHandlers {
  event(event: SidecarEvent): void;
  log(line: string): void;
}

export class SidecarChild {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: string }>;
  private closed = false;

  constructor(
    private readonly proc: SandboxProcess,
    handlers: ChildHandlers,
  ) {
    this.exited = proc.exited.finally(() => (this.closed = true));
    const frames = new LineSplitter((line) => {
      const event = parseEvent(line);
      if (event) handlers.event(event);
      else if (line.trim()) handlers.log(line);
    });
    const logs = new LineSplitter((line) => line.trim() && handlers.log(line));
    proc.stdout.setEncoding('utf8');
    proc.stderr.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => frames.push(chunk));
    proc.stderr.on('data', (chunk: string) => logs.push(chunk));
  }

  get running(): boolean {
    return !this.closed;
  }

  /** Writes one command; resolves once it is handed to the pipe, rejects when the program is gone. */
  write(command: SidecarCommand): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the sidecar program is not running'));
    return new Promise((resolve, reject) => this.proc.stdin.write(encode(command), (err) => (err ? reject(err) : resolve())));
  }

  kill(): Promise<void> {
    return this.proc.kill();
  }

  /** `shutdown`, then SIGTERM to the group after half the grace, then SIGKILL of everything at its end. */
  async stop(graceMs: number): Promise<void> {
    if (this.closed) return this.proc.kill();
    await this.write({ method: 'shutdown' }).catch(() => undefined);
    if (await this.exitsWithin(graceMs / 2)) return this.proc.kill();
    this.proc.signal('SIGTERM');
    await this.exitsWithin(graceMs / 2);
    await this.proc.kill();
  }

  private exitsWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([this.exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]).finally(() =>
      clearTimeout(timer),
    );
  }
}

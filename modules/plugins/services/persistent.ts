/**
 * Persistent hook processes (a plugin that says persistent_subprocess = true in [hooks]): one process per plugin
 * and hook, started at first use or by prewarm, fed one JSON request per line; its answer is the first line it
 * prints that parses as JSON (other lines are logs). Requests to one process wait their turn. A process that
 * answers late, floods its output or exits is killed with its process group and the call fails; the next call
 * starts a fresh one. Idle processes are stopped (pool.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { killGroup, spawnHook } from './hook-process.ts';
import { HookFailure, lastJsonLine } from './protocol.ts';
import type { Launch } from './launch.ts';

interface Waiter {
  resolve(line: string): void;
  reject(err: Error): void;
  bytes: number;
}

export class PersistentProcess {
  readonly child: ChildProcess;
  lastUsed = Date.now();
  private waiter?: Waiter;
  private partial = '';
  private queue: Promise<unknown> = Promise.resolve();
  private exited = false;
  private stderrTail = '';

  constructor(
    private readonly l: Launch,
    readonly generation: number,
    private readonly maxBytes: number,
  ) {
    this.child = spawnHook(l);
    this.child.stdin!.on('error', () => undefined);
    this.child.stdout!.on('data', (chunk: Buffer) => this.onData(chunk));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-500)));
    this.child.on('error', (err) => this.fail(new HookFailure(`could not start: ${err.message}`)));
    this.child.on('exit', (code, signal) => {
      this.exited = true;
      killGroup(this.child.pid);
      const tail = this.stderrTail.trim().split('\n').pop();
      this.fail(new HookFailure(`the persistent process exited (${signal ?? `code ${code}`}) before answering${tail ? `: ${tail}` : ''}`));
    });
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** One request; resolves with the answer line. Waits for earlier requests to this process. */
  request(json: string, timeoutMs: number): Promise<string> {
    const run = () => this.send(json, timeoutMs);
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  stop(): void {
    this.exited = true;
    killGroup(this.child.pid);
    this.child.kill('SIGKILL');
    rmSync(this.l.dir, { recursive: true, force: true });
  }

  private send(json: string, timeoutMs: number): Promise<string> {
    if (this.exited) return Promise.reject(new HookFailure('the persistent process is not running'));
    this.lastUsed = Date.now();
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new HookFailure(`no answer within ${timeoutMs / 1000} s (killed with its process tree)`));
        this.stop();
      }, timeoutMs);
      this.waiter = {
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
        bytes: 0,
      };
      this.child.stdin!.write(`${json}\n`);
    });
  }

  private onData(chunk: Buffer): void {
    const waiter = this.waiter;
    if (!waiter) return;
    waiter.bytes += chunk.length;
    if (waiter.bytes > this.maxBytes) {
      this.fail(new HookFailure(`printed more than ${this.maxBytes} bytes`));
      this.stop();
      return;
    }
    const lines = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (lastJsonLine(line) === undefined) continue;
      this.waiter = undefined;
      this.partial = '';
      waiter.resolve(line);
      return;
    }
  }

  private fail(err: Error): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(err);
  }
}

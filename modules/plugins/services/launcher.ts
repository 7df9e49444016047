/**
 * One-shot hook processes are started by a small helper process (spawner/spawner.cjs), not by the service itself:
 * Node's spawn forks the calling process, and forking the service copies the page tables of its whole heap while its
 * event loop waits (about 12 ms for 350 MB on the 2-core test machine); the helper is small, and its fork blocks
 * nothing here. The helper starts at first use and again after it dies; the process groups it started are known here
 * by pid, so they are killed from this side too (when a call ends early, when the helper dies, at stop).
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { hookEnv, killGroup, type OneShotOutcome } from './hook-process.ts';
import type { Launch } from './launch.ts';

type FromHelper = { op: 'started'; id: number; pid: number | null } | { op: 'closed'; id: number } | ({ op: 'done'; id: number } & OneShotOutcome);

const GUARD_MS = 5000;

const failed = (why: string): OneShotOutcome => ({ stdout: '', stderr: why, exitCode: -1, timedOut: false, overflowed: false });

/** A started one-shot hook process; it may wait for its request (a spare, see ProcessPool). */
export class OneShot {
  pid: number | null = null;
  /** The helper that started it (messages about it go there; its death ends the call). */
  host?: ChildProcess;
  private closed = false;
  private outcome?: OneShotOutcome;
  private resolve?: (outcome: OneShotOutcome) => void;

  constructor(
    readonly id: number,
    readonly launch: Launch,
    private readonly launcher: HookLauncher,
  ) {}

  /** Still waiting for its request (one that ended or flooded before its call is not worth keeping). */
  get waiting(): boolean {
    return !this.closed && !this.outcome;
  }

  /** Writes the request (stdin is then closed); resolves once the process is gone. The limit runs from now. */
  finish(stdin: string, timeoutMs: number): Promise<OneShotOutcome> {
    if (this.outcome) return Promise.resolve(this.outcome);
    return new Promise((resolve) => {
      // The helper enforces the limit; this guard only covers a helper that stopped answering.
      const guard = setTimeout(() => this.abandon('the hook launcher did not answer in time'), timeoutMs + GUARD_MS);
      this.resolve = (outcome) => {
        clearTimeout(guard);
        resolve(outcome);
      };
      this.launcher.sendTo(this.host, { op: 'finish', id: this.id, stdin, timeoutMs });
    });
  }

  kill(): void {
    killGroup(this.pid);
    this.closed = true;
    this.launcher.sendTo(this.host, { op: 'kill', id: this.id });
    this.launcher.forget(this.id);
  }

  /** From the helper. */
  settle(message: FromHelper): void {
    if (message.op === 'started') this.pid = message.pid;
    else if (message.op === 'closed') this.closed = true;
    else this.end(message);
  }

  /** The helper died or stops: the call fails and the process group is killed from here. */
  abandon(why: string): void {
    killGroup(this.pid);
    this.launcher.forget(this.id);
    this.end(failed(why));
  }

  private end(outcome: OneShotOutcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.closed = true;
    this.resolve?.(outcome);
  }
}

export class HookLauncher {
  private helper?: ChildProcess;
  private nextId = 0;
  private readonly calls = new Map<number, OneShot>();
  private stopped = false;

  constructor(
    private readonly script: string,
    private readonly log: Logger,
  ) {}

  start(l: Launch, maxBytes: number): OneShot {
    const once = new OneShot(++this.nextId, l, this);
    this.calls.set(once.id, once);
    if (this.stopped) {
      once.abandon('the hook launcher is stopped (the plugins module is stopping)');
      return once;
    }
    once.host = this.running();
    this.sendTo(once.host, { op: 'start', id: once.id, argv: l.argv, cwd: l.dir, env: hookEnv(l), maxBytes });
    return once;
  }

  /** The helper's pid while it runs. */
  pid(): number | undefined {
    return this.helper?.exitCode === null ? this.helper.pid : undefined;
  }

  /** A message to the helper that runs a process; none when that helper is gone (its exit ends the call). */
  sendTo(host: ChildProcess | undefined, message: Record<string, unknown>): void {
    if (!host?.connected) return;
    host.send(message, (err) => err && this.log.debug({ err: err.message }, 'hook launcher message not delivered'));
  }

  forget(id: number): void {
    this.calls.delete(id);
  }

  stop(): void {
    this.stopped = true;
    this.lost('the hook launcher stopped', () => true);
    this.helper?.kill('SIGKILL');
    this.helper = undefined;
  }

  private running(): ChildProcess {
    if (this.helper && this.helper.exitCode === null && this.helper.connected) return this.helper;
    // No loaders or options of the service (tsx): a plain node starts in a fraction of the time.
    const helper = fork(this.script, [], { execArgv: [], env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    helper.on('message', (message: FromHelper) => {
      const once = this.calls.get(message.id);
      once?.settle(message);
      if (message.op === 'done') this.calls.delete(message.id);
    });
    helper.on('exit', (code, signal) => {
      if (this.helper === helper) this.helper = undefined;
      if (!this.stopped) this.log.warn({ code, signal }, 'the hook launcher exited; it starts again at the next hook call');
      this.lost(`the hook launcher exited (${signal ?? `code ${code}`})`, (once) => once.host === helper);
    });
    this.helper = helper;
    return helper;
  }

  /** The processes of a dead helper (or all, at stop) fail their calls and are killed from here. */
  private lost(why: string, of: (once: OneShot) => boolean): void {
    for (const once of [...this.calls.values()].filter(of)) once.abandon(why);
  }
}

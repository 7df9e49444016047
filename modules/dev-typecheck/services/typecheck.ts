import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setPriority, tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';

const DIAGNOSTIC = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/;

/**
 * Runs the TypeScript checker in the background (one run at a time, incremental) on the tsconfig
 * that covers a module folder, and logs each error with file and line.
 */
export class BackgroundTypecheck {
  private running?: Promise<void>;
  private again = new Set<string>();
  private child?: ChildProcess;
  private readonly skipped = new Set<string>();
  private readonly tsc: string;

  constructor(
    private readonly log: Logger,
    private readonly serviceRoot: string,
  ) {
    this.tsc = createRequire(path.join(serviceRoot, 'package.json')).resolve('typescript/bin/tsc');
  }

  /**
   * Checks the project that holds the module folder: its own tsconfig.json, else the service's when the
   * folder is inside the service. A module elsewhere without a tsconfig.json is in no project: checking
   * the whole service for it would cost a core for nothing, so it is skipped (said once).
   */
  schedule(moduleDir: string): void {
    const own = path.join(moduleDir, 'tsconfig.json');
    const inside = !path.relative(this.serviceRoot, moduleDir).startsWith('..');
    if (!existsSync(own) && !inside) {
      if (!this.skipped.has(moduleDir)) this.log.info({ dir: moduleDir }, 'type check skipped: the module has no tsconfig.json (see docs/modules.md)');
      this.skipped.add(moduleDir);
      return;
    }
    this.again.add(existsSync(own) ? own : path.join(this.serviceRoot, 'tsconfig.json'));
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  /** Ends the run under way (shutdown) and waits for it. */
  async stop(): Promise<void> {
    this.again.clear();
    this.child?.kill();
    await this.running;
  }

  private async drain(): Promise<void> {
    while (this.again.size) {
      const [project] = this.again;
      this.again.delete(project);
      await this.check(project);
    }
  }

  private check(project: string): Promise<void> {
    const buildInfo = path.join(tmpdir(), `talon-tsc-${Buffer.from(project).toString('base64url').slice(-40)}.tsbuildinfo`);
    const args = [this.tsc, '--noEmit', '-p', project, '--incremental', '--tsBuildInfoFile', buildInfo, '--pretty', 'false'];
    return new Promise((resolve) => {
      const child = (this.child = spawn(process.execPath, args, { cwd: path.dirname(project), stdio: ['ignore', 'pipe', 'ignore'] }));
      // Background work: the service's requests (and the next reload) come first.
      try {
        if (child.pid) setPriority(child.pid, 10);
      } catch {
        // the checker already exited
      }
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk));
      child.on('error', (err) => this.log.warn({ err }, 'type check could not run'));
      child.on('close', (_code, signal) => {
        this.child = undefined;
        if (signal) return resolve();
        const errors = out.split('\n').flatMap((line) => {
          const m = DIAGNOSTIC.exec(line.trim());
          return m ? [{ location: `${path.resolve(path.dirname(project), m[1])}:${m[2]}:${m[3]}`, code: m[4], message: m[5] }] : [];
        });
        for (const e of errors) this.log.warn({ location: e.location, code: e.code }, `type error: ${e.location}: ${e.message}`);
        if (!errors.length) this.log.info({ project }, 'type check passed');
        resolve();
      });
    });
  }
}

/**
 * One hook call of one plugin: the request on stdin (a one-shot process, or a persistent process), the answer read
 * and checked, retries as the plugin asks, and every attempt counted for health. The wall-clock limit is the spec's
 * 30 s unless configured lower; a plugin may only lower it further.
 */
import { rmSync } from 'node:fs';
import type { HookName } from '@talon/plugins';
import type { Isolation } from './isolation.ts';
import { launch } from './launch.ts';
import type { HookLauncher, OneShot } from './launcher.ts';
import { PersistentProcess } from './persistent.ts';
import type { ProcessPool } from './pool.ts';
import { HookFailure, readReply, type HookReply } from './protocol.ts';
import type { HookStats } from './stats.ts';
import type { LoadedPlugin } from './store.ts';

export interface RunnerDeps {
  launcher: HookLauncher;
  pool: ProcessPool;
  stats: HookStats;
  isolation: () => Isolation;
  /** Settles once the isolation probe has answered: no hook process starts before. */
  isolationProbed: () => Promise<unknown>;
  runRoot: () => string;
  timeoutSecs: () => number;
  maxOutputBytes: () => number;
}

export class HookRunner {
  constructor(private readonly deps: RunnerDeps) {}

  timeoutMs(plugin: LoadedPlugin): number {
    const own = plugin.manifest?.hookTimeoutSecs;
    return Math.min(this.deps.timeoutSecs(), own ?? Infinity) * 1000;
  }

  /** Calls the hook; rejects with a HookFailure after the last attempt. */
  async call(plugin: LoadedPlugin, hook: HookName, request: Record<string, unknown>, agentId?: string): Promise<HookReply> {
    const manifest = plugin.manifest!;
    const attempts = 1 + manifest.maxRetries;
    await this.deps.isolationProbed();
    let last: Error = new HookFailure('not called');
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const started = performance.now();
      try {
        const stdout = await this.attempt(plugin, hook, JSON.stringify({ ...request, type: hook }), agentId);
        const reply = readReply(hook, stdout);
        this.deps.stats.record(plugin.name, hook, performance.now() - started, null, agentId);
        return reply;
      } catch (err) {
        last = err instanceof HookFailure ? err : new HookFailure((err as Error).message);
        this.deps.stats.record(plugin.name, hook, performance.now() - started, last.message, agentId);
      }
      if (attempt < attempts) await new Promise((r) => setTimeout(r, manifest.retryDelayMs));
    }
    throw last;
  }

  /** Starts the persistent process of a hook ahead of its first call (once the isolation probe has answered). */
  async prewarm(plugin: LoadedPlugin, hook: HookName): Promise<PersistentProcess> {
    await this.deps.isolationProbed();
    return this.persistent(plugin, hook);
  }

  private attempt(plugin: LoadedPlugin, hook: HookName, json: string, agentId?: string): Promise<string> {
    if (plugin.manifest!.persistent) return this.persistent(plugin, hook).request(json, this.timeoutMs(plugin));
    return this.oneShot(plugin, hook, json, agentId);
  }

  private persistent(plugin: LoadedPlugin, hook: HookName): PersistentProcess {
    return this.deps.pool.get(plugin.name, hook, plugin.generation, () => {
      const l = launch(plugin, hook, { isolation: this.deps.isolation(), runRoot: this.deps.runRoot(), persistent: true });
      return new PersistentProcess(l, plugin.generation, this.deps.maxOutputBytes());
    });
  }

  private start(plugin: LoadedPlugin, hook: HookName, agentId?: string): OneShot {
    const l = launch(plugin, hook, { isolation: this.deps.isolation(), runRoot: this.deps.runRoot(), agentId });
    return this.deps.launcher.start(l, this.deps.maxOutputBytes());
  }

  /** A one-shot call; with prespawn, it takes the spare started after the previous call and leaves a new one. */
  private async oneShot(plugin: LoadedPlugin, hook: HookName, json: string, agentId?: string): Promise<string> {
    const prespawn = plugin.manifest!.prespawn && agentId !== undefined;
    const once = (prespawn && this.deps.pool.takeSpare(plugin.name, hook, agentId, plugin.generation)) || this.start(plugin, hook, agentId);
    const timeoutMs = this.timeoutMs(plugin);
    try {
      const out = await once.finish(`${json}\n`, timeoutMs);
      if (out.timedOut) throw new HookFailure(`no answer within ${timeoutMs / 1000} s (killed with its process tree)`);
      if (out.overflowed) throw new HookFailure(`printed more than ${this.deps.maxOutputBytes()} bytes`);
      if (out.exitCode !== 0) {
        const tail = errorLine(out.stderr);
        throw new HookFailure(`exited with code ${out.exitCode}${tail ? `: ${tail}` : ''}`);
      }
      return out.stdout;
    } finally {
      rmSync(once.launch.dir, { recursive: true, force: true });
      if (prespawn) this.refill(plugin, hook, agentId);
    }
  }

  /** Starts the next call's process once this call's answer is on its way (a spawn blocks the event loop briefly). */
  private refill(plugin: LoadedPlugin, hook: HookName, agentId: string): void {
    setImmediate(() => {
      if (this.deps.pool.sparesAllowed()) this.deps.pool.putSpare(plugin.name, hook, agentId, plugin.generation, this.start(plugin, hook, agentId));
    });
  }
}

/** The line of stderr that says what went wrong: the last one naming an error, else the last one. */
export function errorLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const named = lines.filter((l) => /error|exception|traceback|denied|not found/i.test(l));
  return (named.at(-1) ?? lines.at(-1) ?? '').slice(0, 300);
}

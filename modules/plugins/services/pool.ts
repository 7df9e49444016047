/**
 * The hook processes that outlive one call: persistent processes (one per plugin and hook, many requests each) and
 * spares (a one-shot process started ahead of the next call of a plugin, hook and agent, for plugins that say
 * `prespawn = true`: the call then skips the interpreter's start). Reloading, disabling or uninstalling a plugin
 * stops its processes; unused ones are stopped after a while; spares are capped in number, oldest out first.
 */
import { rmSync } from 'node:fs';
import type { OneShot } from './launcher.ts';
import type { PersistentProcess } from './persistent.ts';

interface Spare {
  once: OneShot;
  generation: number;
  at: number;
}

const keyOf = (...parts: string[]) => parts.join('\0');
const ofPlugin = (key: string, plugin: string) => key.startsWith(`${plugin}\0`);

function discard(spare: Spare): void {
  spare.once.kill();
  rmSync(spare.once.launch.dir, { recursive: true, force: true });
}

export class ProcessPool {
  private readonly processes = new Map<string, PersistentProcess>();
  private readonly spares = new Map<string, Spare>();
  private closed = false;

  constructor(private readonly maxSpares: () => number) {}

  /** The live process of a plugin's hook, or a new one when there is none (or it is of an older plugin load). */
  get(plugin: string, hook: string, generation: number, start: () => PersistentProcess): PersistentProcess {
    const key = keyOf(plugin, hook);
    const current = this.processes.get(key);
    if (current?.alive && current.generation === generation) return current;
    current?.stop();
    const fresh = start();
    this.processes.set(key, fresh);
    return fresh;
  }

  /** Whether a spare may be started now (not once the pool is stopped, nor when the cap is 0). */
  sparesAllowed(): boolean {
    return !this.closed && this.maxSpares() > 0;
  }

  /** The spare waiting for this call, taken out of the pool; undefined when there is none still usable. */
  takeSpare(plugin: string, hook: string, agentId: string, generation: number): OneShot | undefined {
    const key = keyOf(plugin, hook, agentId);
    const spare = this.spares.get(key);
    if (!spare) return undefined;
    this.spares.delete(key);
    if (spare.generation === generation && spare.once.waiting) return spare.once;
    discard(spare);
    return undefined;
  }

  /** Keeps a freshly started process for the next call (replacing an older spare; the oldest goes past the cap). */
  putSpare(plugin: string, hook: string, agentId: string, generation: number, once: OneShot): void {
    const key = keyOf(plugin, hook, agentId);
    const old = this.spares.get(key);
    if (old) discard(old);
    this.spares.delete(key);
    this.spares.set(key, { once, generation, at: Date.now() });
    while (this.spares.size > this.maxSpares()) {
      const [oldest, spare] = this.spares.entries().next().value as [string, Spare];
      this.spares.delete(oldest);
      discard(spare);
    }
  }

  /** Stops every process of a plugin; answers how many there were. */
  evict(plugin: string): number {
    let n = 0;
    for (const [key, proc] of this.processes) {
      if (!ofPlugin(key, plugin)) continue;
      proc.stop();
      this.processes.delete(key);
      n++;
    }
    for (const [key, spare] of this.spares) {
      if (!ofPlugin(key, plugin)) continue;
      discard(spare);
      this.spares.delete(key);
      n++;
    }
    return n;
  }

  running(plugin: string): Array<{ hook: string; pid: number | undefined }> {
    return [...this.processes].filter(([key, p]) => ofPlugin(key, plugin) && p.alive).map(([key, p]) => ({ hook: key.split('\0')[1], pid: p.child.pid }));
  }

  /** The spares of a plugin: hook, agent and process id. */
  spareProcesses(plugin: string): Array<{ hook: string; agent_id: string; pid: number | undefined }> {
    return [...this.spares]
      .filter(([key, s]) => ofPlugin(key, plugin) && s.once.waiting)
      .map(([key, s]) => ({ hook: key.split('\0')[1], agent_id: key.split('\0')[2], pid: s.once.pid ?? undefined }));
  }

  sweep(idleMs: number): void {
    const now = Date.now();
    for (const [key, proc] of this.processes) {
      if (proc.alive && now - proc.lastUsed < idleMs) continue;
      proc.stop();
      this.processes.delete(key);
    }
    for (const [key, spare] of this.spares) {
      if (spare.once.waiting && now - spare.at < idleMs) continue;
      discard(spare);
      this.spares.delete(key);
    }
  }

  stopAll(): void {
    this.closed = true;
    for (const proc of this.processes.values()) proc.stop();
    for (const spare of this.spares.values()) discard(spare);
    this.processes.clear();
    this.spares.clear();
  }
}

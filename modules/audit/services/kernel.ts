/** What the kernel hooks tell the trail: configuration changes, module lifecycle, shutdown. */
import type { ConfigChange, ModuleInfo } from '@talon/module-sdk';
import type { AuditRecord } from '@talon/audit';

export function fromConfigChange(change: ConfigChange): AuditRecord {
  // Never the values: a changed key may hold a secret. A reload lists the changed keys.
  const keys = change.path === '' && Array.isArray(change.value) ? (change.value as unknown[]).map(String) : [change.path];
  return { event_type: change.path === '' ? 'config_reloaded' : 'config_changed', details: { keys } };
}

/**
 * Module starts and stops as the kernel's hooks tell them. A reload fires `loaded` for the new copy (before the
 * kernel notes the reload) and then `unloaded` for the old one: a second `loaded` of a running module is the
 * reload, and the old copy's `unloaded` (the module still runs) says nothing more. Stops during a shutdown are
 * left out: the shutdown entry says it.
 */
export class ModuleLifecycle {
  private readonly running = new Set<string>();
  private stopping = false;

  constructor(private readonly modules: () => ModuleInfo[]) {
    for (const m of modules()) if (m.state === 'running') this.running.add(m.id);
  }

  shutdown(): void {
    this.stopping = true;
  }

  loaded(info: ModuleInfo): AuditRecord | undefined {
    if (this.stopping) return undefined;
    const again = this.running.has(info.id);
    this.running.add(info.id);
    return { event_type: again ? 'module_reloaded' : 'module_loaded', details: moduleDetails(info) };
  }

  unloaded(info: ModuleInfo): AuditRecord | undefined {
    if (this.stopping || this.modules().some((m) => m.id === info.id && m.state === 'running')) return undefined;
    this.running.delete(info.id);
    return { event_type: 'module_unloaded', details: { ...moduleDetails(info), state: info.state, reason: info.error ?? null } };
  }
}

const moduleDetails = (info: ModuleInfo) => ({ module: info.id, version: info.version, critical: info.critical });

/**
 * Module failures fire no hook: compares each poll's view with the last one and reports a module that became
 * failed or blocked, and a reload that failed (the old copy kept serving).
 */
export class ModuleWatch {
  private readonly seen = new Map<string, string>();

  constructor(private readonly modules: () => ModuleInfo[]) {
    // Modules that failed during start-up, before the trail was watching, are reported by the first poll.
    for (const m of modules()) if (!failed(m)) this.seen.set(m.id, this.key(m));
  }

  private key(m: ModuleInfo): string {
    return `${m.state}|${m.lastReload?.at ?? ''}`;
  }

  changes(): AuditRecord[] {
    const out: AuditRecord[] = [];
    for (const m of this.modules()) {
      const key = this.key(m);
      if (this.seen.get(m.id) === key) continue;
      this.seen.set(m.id, key);
      if (failed(m)) {
        out.push({ event_type: 'module_failed', details: { module: m.id, state: m.state, error: m.error ?? null }, outcome: 'failed' });
      } else if (m.lastReload && !m.lastReload.ok) {
        out.push({ event_type: 'module_reload_failed', details: { module: m.id, error: m.lastReload.error ?? null }, outcome: 'failed' });
      }
    }
    return out;
  }
}

const failed = (m: ModuleInfo): boolean => m.state === 'failed' || m.state === 'blocked';

/** What the kernel hooks tell the trail: configuration changes, module lifecycle, shutdown. */
import type { ConfigChange, ModuleInfo } from '@talon/module-sdk';
import type { AuditRecord } from '@talon/audit';

export function fromConfigChange(change: ConfigChange): AuditRecord {
  // Never the values: a changed key may hold a secret. A reload lists the changed keys.
  const keys = change.path === '' && Array.isArray(change.value) ? (change.value as unknown[]).map(String) : [change.path];
  return { event_type: change.path === '' ? 'config_reloaded' : 'config_changed', details: { keys } };
}

export function fromModule(info: ModuleInfo, what: 'loaded' | 'unloaded'): AuditRecord {
  const reloaded = what === 'loaded' && info.lastReload?.ok === true && Date.now() - Date.parse(info.lastReload.at) < 60_000;
  return { event_type: reloaded ? 'module_reloaded' : `module_${what}`, details: { module: info.id, version: info.version, critical: info.critical } };
}

/**
 * Module failures fire no hook: compares each poll's view with the last one and reports a module that became
 * failed or blocked, and a reload that failed (the old copy kept serving).
 */
export class ModuleWatch {
  private readonly seen = new Map<string, string>();

  constructor(private readonly modules: () => ModuleInfo[]) {
    for (const m of modules()) this.seen.set(m.id, this.key(m));
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
      if (m.state === 'failed' || m.state === 'blocked') {
        out.push({ event_type: 'module_failed', details: { module: m.id, state: m.state, error: m.error ?? null }, outcome: 'failed' });
      } else if (m.lastReload && !m.lastReload.ok) {
        out.push({ event_type: 'module_reload_failed', details: { module: m.id, error: m.lastReload.error ?? null }, outcome: 'failed' });
      }
    }
    return out;
  }
}

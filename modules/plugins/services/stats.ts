/** Per plugin and hook: calls, errors, latency; and the last calls as traces (for GET /api/plugins/{name}/health). */
import type { HookName } from '@talon/plugins';

interface HookStat {
  calls: number;
  errors: number;
  totalMs: number;
  samples: number[];
  lastError: string | null;
  lastCalledAt: string | null;
}

export interface Trace {
  hook: HookName;
  at: string;
  ms: number;
  ok: boolean;
  error: string | null;
  agent_id: string | null;
}

const SAMPLES = 200;
const TRACES = 20;

export class HookStats {
  private readonly stats = new Map<string, Map<HookName, HookStat>>();
  private readonly traces = new Map<string, Trace[]>();

  record(plugin: string, hook: HookName, ms: number, error: string | null, agentId?: string): void {
    let byHook = this.stats.get(plugin);
    if (!byHook) this.stats.set(plugin, (byHook = new Map()));
    let s = byHook.get(hook);
    if (!s) byHook.set(hook, (s = { calls: 0, errors: 0, totalMs: 0, samples: [], lastError: null, lastCalledAt: null }));
    s.calls++;
    s.totalMs += ms;
    s.samples.push(ms);
    if (s.samples.length > SAMPLES) s.samples.shift();
    s.lastCalledAt = new Date().toISOString();
    if (error) {
      s.errors++;
      s.lastError = error;
    }
    const list = this.traces.get(plugin) ?? [];
    list.push({ hook, at: s.lastCalledAt, ms: Math.round(ms * 10) / 10, ok: !error, error, agent_id: agentId ?? null });
    if (list.length > TRACES) list.shift();
    this.traces.set(plugin, list);
  }

  view(plugin: string) {
    const byHook = this.stats.get(plugin) ?? new Map<HookName, HookStat>();
    const hook_stats = Object.fromEntries(
      [...byHook].map(([hook, s]) => {
        const sorted = [...s.samples].sort((a, b) => a - b);
        const p95 = sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)] : 0;
        return [
          hook,
          {
            calls: s.calls,
            errors: s.errors,
            error_rate_pct: s.calls ? Math.round((s.errors / s.calls) * 1000) / 10 : 0,
            avg_elapsed_ms: s.calls ? Math.round((s.totalMs / s.calls) * 10) / 10 : 0,
            p95_elapsed_ms: Math.round(p95 * 10) / 10,
            last_error: s.lastError,
            last_called_at: s.lastCalledAt,
          },
        ];
      }),
    );
    return { hook_stats, recent_traces: [...(this.traces.get(plugin) ?? [])].reverse() };
  }

  forget(plugin: string): void {
    this.stats.delete(plugin);
    this.traces.delete(plugin);
  }
}

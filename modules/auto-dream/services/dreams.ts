/**
 * Consolidation runs per agent: due when its last run is older than min_hours. One agent at a time; the
 * progress of the running one is kept in memory, the outcome of each run in auto_dream_agents.
 */
import type { Database } from 'better-sqlite3';
import { prepared } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { SemanticMemory } from '@talon/memory';

interface Row {
  agent_id: string;
  enabled: number | null;
  last_run_at: string | null;
  last_status: string | null;
  last_result: string | null;
  runs: number;
}

export interface DreamDeps {
  db: Database;
  agents: () => AgentRegistry | undefined;
  memory: () => SemanticMemory | undefined;
  config: () => { enabled: boolean; min_hours: number; check_interval_secs: number };
  publish: (agentId: string, status: string, detail: Record<string, unknown>) => void;
}

export class Dreams {
  private running: { agentId: string; startedAt: string } | undefined;
  private nextCheck: number | undefined;

  constructor(private readonly d: DreamDeps) {}

  private row(agentId: string): Row | undefined {
    return prepared(this.d.db, 'SELECT * FROM auto_dream_agents WHERE agent_id = ?').get(agentId) as Row | undefined;
  }

  private enabledFor(row: Row | undefined): boolean {
    return row?.enabled == null ? this.d.config().enabled : row.enabled === 1;
  }

  setEnabled(agentId: string, enabled: boolean): void {
    prepared(this.d.db, 'INSERT INTO auto_dream_agents (agent_id, enabled) VALUES (?, ?) ON CONFLICT (agent_id) DO UPDATE SET enabled = excluded.enabled').run(
      agentId,
      enabled ? 1 : 0,
    );
  }

  private nextRun(row: Row | undefined): string | null {
    if (!this.enabledFor(row)) return null;
    const due = row?.last_run_at ? Date.parse(row.last_run_at) + this.d.config().min_hours * 3_600_000 : Date.now();
    return new Date(Math.max(due, this.nextCheck ?? Date.now())).toISOString();
  }

  status() {
    const c = this.d.config();
    const agents = (this.d.agents()?.list() ?? []).map((a) => {
      const row = this.row(a.id);
      const running = this.running?.agentId === a.id;
      return {
        agent_id: a.id,
        agent_name: a.name,
        auto_dream_enabled: this.enabledFor(row),
        last_consolidated_at: row?.last_run_at ?? null,
        next_run_at: this.nextRun(row),
        runs: row?.runs ?? 0,
        progress: running
          ? { status: 'running', started_at: this.running!.startedAt }
          : row?.last_status
            ? { status: row.last_status, result: row.last_result ? (JSON.parse(row.last_result) as unknown) : null }
            : null,
      };
    });
    return { enabled: c.enabled, min_hours: c.min_hours, check_interval_secs: c.check_interval_secs, memory_available: Boolean(this.d.memory()), agents };
  }

  /** Consolidates one agent's memory now; answers what happened. */
  run(agentId: string): { fired: boolean; agent_id: string; reason: string; result?: unknown } {
    const memory = this.d.memory();
    if (!memory) return { fired: false, agent_id: agentId, reason: 'the memory module is not running' };
    if (this.running) return { fired: false, agent_id: agentId, reason: `a consolidation is running for agent ${this.running.agentId}` };
    this.running = { agentId, startedAt: new Date().toISOString() };
    let status = 'completed';
    let result: unknown;
    try {
      result = memory.consolidate(agentId);
    } catch (err) {
      status = 'failed';
      result = { error: (err as Error).message };
    } finally {
      this.running = undefined;
    }
    prepared(
      this.d.db,
      `INSERT INTO auto_dream_agents (agent_id, last_run_at, last_status, last_result, runs) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (agent_id) DO UPDATE SET last_run_at = excluded.last_run_at, last_status = excluded.last_status, last_result = excluded.last_result, runs = runs + 1`,
    ).run(agentId, new Date().toISOString(), status, JSON.stringify(result));
    this.d.publish(agentId, status, { result });
    return { fired: true, agent_id: agentId, reason: status, result };
  }

  /** The timer's work: every enabled agent whose last run is old enough. */
  tick(): void {
    this.nextCheck = Date.now() + this.d.config().check_interval_secs * 1000;
    const now = Date.now();
    for (const a of this.d.agents()?.list() ?? []) {
      const row = this.row(a.id);
      if (!this.enabledFor(row)) continue;
      if (row?.last_run_at && now - Date.parse(row.last_run_at) < this.d.config().min_hours * 3_600_000) continue;
      this.run(a.id);
    }
  }
}

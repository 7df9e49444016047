/**
 * Consolidation per agent. Each agent that has auto-dream on has a scheduler job (`every <min_hours>`) naming the
 * auto-dream handler: the scheduler decides when it runs (misfires, backoff, auto-disable, one engine for every
 * schedule), this module what a run does. One agent at a time; the progress of the running one is kept in memory,
 * the outcome of each run in auto_dream_agents.
 */
import type { Database } from 'better-sqlite3';
import { prepared } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { SemanticMemory } from '@talon/memory';
import type { HandlerOutcome, HandlerRun, SchedulerJobs } from '@talon/scheduler';

/** The scheduler handler auto-dream's jobs name. */
export const HANDLER = 'auto-dream.consolidate';

interface Row {
  agent_id: string;
  enabled: number | null;
  last_run_at: string | null;
  last_status: string | null;
  last_result: string | null;
  runs: number;
  job_id: string | null;
}

export interface DreamDeps {
  db: Database;
  agents: () => AgentRegistry | undefined;
  memory: () => SemanticMemory | undefined;
  jobs: () => SchedulerJobs | undefined;
  config: () => { enabled: boolean; min_hours: number };
  warn: (err: unknown, agentId: string) => void;
  publish: (agentId: string, status: string, detail: Record<string, unknown>) => void;
}

export class Dreams {
  private running: { agentId: string; startedAt: string } | undefined;

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
    this.sync(agentId);
  }

  /** Every agent's job as the switches and [auto_dream] say (at start and after a configuration change). */
  syncAll(): void {
    for (const a of this.d.agents()?.list() ?? []) {
      try {
        this.sync(a.id);
      } catch (err) {
        this.d.warn(err, a.id);
      }
    }
  }

  /** The agent's scheduler job: created when auto-dream is on for it, enabled or disabled to match, every min_hours. */
  sync(agentId: string): void {
    const jobs = this.d.jobs();
    if (!jobs) return;
    const row = this.row(agentId);
    const enabled = this.enabledFor(row);
    const schedule = `every ${Math.round(this.d.config().min_hours * 3600)}s`;
    const job = row?.job_id ? jobs.get(row.job_id) : undefined;
    if (job) {
      if (job.schedule !== schedule || job.enabled !== enabled) jobs.reschedule(job.id, { ...(job.schedule === schedule ? {} : { schedule }), enabled });
      return;
    }
    if (!enabled) return;
    const name = this.d.agents()?.get(agentId)?.name ?? agentId;
    const created = jobs.create({ name: `auto-dream ${name}`, agentId, schedule, prompt: agentId, handler: HANDLER }, 'auto-dream');
    prepared(this.d.db, 'INSERT INTO auto_dream_agents (agent_id, job_id) VALUES (?, ?) ON CONFLICT (agent_id) DO UPDATE SET job_id = excluded.job_id').run(
      agentId,
      created.id,
    );
  }

  /** The scheduler handler: consolidates the job's agent unless a run (a manual one) was recent enough. */
  async scheduled(job: HandlerRun): Promise<HandlerOutcome | undefined> {
    if (job.handler !== HANDLER) return undefined;
    const agentId = job.agentId ?? job.input;
    const last = this.row(agentId)?.last_run_at;
    const minMs = this.d.config().min_hours * 3_600_000;
    if (last && Date.now() - Date.parse(last) < minMs) return { ok: true, result: `skipped: consolidated at ${last}, less than min_hours ago` };
    const outcome = this.run(agentId);
    if (!outcome.fired || outcome.reason === 'failed') return { ok: false, error: outcome.fired ? JSON.stringify(outcome.result) : outcome.reason };
    return { ok: true, result: JSON.stringify(outcome.result) };
  }

  status() {
    const c = this.d.config();
    const jobs = this.d.jobs();
    const agents = (this.d.agents()?.list() ?? []).map((a) => {
      const row = this.row(a.id);
      const running = this.running?.agentId === a.id;
      const job = row?.job_id ? jobs?.get(row.job_id) : undefined;
      return {
        agent_id: a.id,
        agent_name: a.name,
        auto_dream_enabled: this.enabledFor(row),
        last_consolidated_at: row?.last_run_at ?? null,
        next_run_at: job?.enabled ? job.next_run : null,
        job_id: job?.id ?? null,
        runs: row?.runs ?? 0,
        progress: running
          ? { status: 'running', started_at: this.running!.startedAt }
          : row?.last_status
            ? { status: row.last_status, result: row.last_result ? (JSON.parse(row.last_result) as unknown) : null }
            : null,
      };
    });
    return { enabled: c.enabled, min_hours: c.min_hours, scheduler_available: Boolean(jobs), memory_available: Boolean(this.d.memory()), agents };
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
}

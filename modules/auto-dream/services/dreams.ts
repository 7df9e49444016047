/**
 * Consolidation per agent. Each agent that has auto-dream on has a scheduler job (`every <min_hours>`) naming the
 * auto-dream handler: the scheduler decides when it runs (misfires, backoff, auto-disable, one engine for every
 * schedule), this module what a run does. One agent at a time; the progress of the running one is kept in memory,
 * the outcome of each run in auto_dream_agents.
 */
import type { NodeAccess, Queries, Store } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { SemanticMemory } from '@talon/memory';
import type { HandlerOutcome, HandlerRun, SchedulerJobs } from '@talon/scheduler';

/** The scheduler handler auto-dream's jobs name. */
export const HANDLER = 'auto-dream.consolidate';

/**
 * job_id while a process creates the agent's scheduler job: `pending:<node id>`. Whoever writes it first creates the
 * job, so two processes that both find the job missing (both starting, both applying a configuration change) make one.
 * Lower case, so the LIKE of the sweep means the same on every engine.
 */
const PENDING = 'pending:';

interface Row {
  agent_id: string;
  enabled: number | null;
  last_run_at: string | null;
  last_status: string | null;
  last_result: string | null;
  runs: number;
  job_id: string | null;
}

/**
 * A process that dies between the scheduler's `jobs.create` and recording `job_id` leaves a job nobody names; the
 * takeover then creates another. The scheduler's contract cannot look jobs up (by name or handler), so the stray is
 * told when it fires: the agent's row names another job, or none, and no creation is pending (a pending one may be
 * recording this very job).
 */
function isStray(row: Row | undefined, jobId: string): boolean {
  if (!row || row.job_id === jobId) return false;
  return !row.job_id?.startsWith(PENDING);
}

export interface DreamDeps {
  store: Store;
  /** This process's node id, and which nodes live (to take over a dead one's pending claims). */
  nodes: Pick<NodeAccess, 'id' | 'live'>;
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

  private row(agentId: string, q: Queries = this.d.store): Promise<Row | undefined> {
    return q.one<Row>('SELECT * FROM auto_dream_agents WHERE agent_id = ?', [agentId]);
  }

  private enabledFor(row: Row | undefined): boolean {
    return row?.enabled == null ? this.d.config().enabled : row.enabled === 1;
  }

  async setEnabled(agentId: string, enabled: boolean): Promise<void> {
    await this.d.store.run('INSERT INTO auto_dream_agents (agent_id, enabled) VALUES (?, ?) ON CONFLICT (agent_id) DO UPDATE SET enabled = excluded.enabled', [
      agentId,
      enabled ? 1 : 0,
    ]);
    await this.sync(agentId);
  }

  /** Every agent's job as the switches and [auto_dream] say (at start and after a configuration change). */
  async syncAll(): Promise<void> {
    for (const a of this.d.agents()?.list() ?? []) await this.syncQuietly(a.id);
  }

  private async syncQuietly(agentId: string): Promise<void> {
    try {
      await this.sync(agentId);
    } catch (err) {
      this.d.warn(err, agentId);
    }
  }

  /** The agent's scheduler job: created when auto-dream is on for it, enabled or disabled to match, every min_hours. */
  async sync(agentId: string): Promise<void> {
    const jobs = this.d.jobs();
    if (!jobs) return;
    const row = await this.row(agentId);
    const enabled = this.enabledFor(row);
    const schedule = `every ${Math.round(this.d.config().min_hours * 3600)}s`;
    const pending = row?.job_id?.startsWith(PENDING) ?? false;
    const job = row?.job_id && !pending ? await jobs.get(row.job_id) : undefined;
    if (job) {
      if (job.schedule !== schedule || job.enabled !== enabled) await jobs.reschedule(job.id, { ...(job.schedule === schedule ? {} : { schedule }), enabled });
      return;
    }
    // Pending: a process is creating the job right now (or died doing it: takeOver hands it back).
    if (!enabled || pending) return;
    const token = PENDING + this.d.nodes.id;
    if (!(await this.claim(agentId, token, row?.job_id ?? null))) return;
    try {
      const name = this.d.agents()?.get(agentId)?.name ?? agentId;
      const created = await jobs.create({ name: `auto-dream ${name}`, agentId, schedule, prompt: agentId, handler: HANDLER }, 'auto-dream');
      await this.d.store.run('UPDATE auto_dream_agents SET job_id = ? WHERE agent_id = ? AND job_id = ?', [created.id, agentId, token]);
    } catch (err) {
      await this.d.store.run('UPDATE auto_dream_agents SET job_id = NULL WHERE agent_id = ? AND job_id = ?', [agentId, token]);
      throw err;
    }
  }

  /**
   * Takes the creation of the agent's job: one conditional write, which only the first of several processes wins
   * (the job_id it saw, none or a job since deleted, is still there). True when this process is to create it.
   */
  private async claim(agentId: string, token: string, seen: string | null): Promise<boolean> {
    const { changes } = await this.d.store.run(
      `INSERT INTO auto_dream_agents (agent_id, job_id) VALUES (?, ?)
       ON CONFLICT (agent_id) DO UPDATE SET job_id = excluded.job_id WHERE auto_dream_agents.job_id IS NULL OR auto_dream_agents.job_id = ?`,
      [agentId, token, seen ?? ''],
    );
    return changes > 0;
  }

  /** A dead node's pending creations go back (one conditional update), and this process makes those jobs. */
  async takeOver(nodeId: string): Promise<void> {
    const released = await this.d.store.many<{ agent_id: string }>('UPDATE auto_dream_agents SET job_id = NULL WHERE job_id = ? RETURNING agent_id', [
      PENDING + nodeId,
    ]);
    for (const r of released) await this.syncQuietly(r.agent_id);
  }

  /** At start: the pending creations of nodes that are not live (they died while no process ran to notice). */
  async sweep(): Promise<void> {
    const live = new Set(await this.d.nodes.live());
    const rows = await this.d.store.many<{ job_id: string }>("SELECT DISTINCT job_id FROM auto_dream_agents WHERE job_id LIKE 'pending:%'");
    for (const { job_id } of rows) {
      const node = job_id.slice(PENDING.length);
      if (!live.has(node)) await this.takeOver(node);
    }
  }

  /**
   * The scheduler handler: consolidates the job's agent unless a run (a manual one) was recent enough. A job the
   * agent's row does not name is a stray and is removed, not run (see isStray).
   */
  async scheduled(job: HandlerRun): Promise<HandlerOutcome | undefined> {
    if (job.handler !== HANDLER) return undefined;
    const agentId = job.agentId ?? job.input;
    const row = await this.row(agentId);
    if (isStray(row, job.jobId)) {
      await this.d.jobs()?.remove(job.jobId);
      return { ok: true, result: `removed: agent ${agentId}'s auto-dream job is ${row?.job_id ?? 'none'}, not this one (a duplicate left by a crash)` };
    }
    const last = row?.last_run_at;
    const minMs = this.d.config().min_hours * 3_600_000;
    if (last && Date.now() - Date.parse(last) < minMs) return { ok: true, result: `skipped: consolidated at ${last}, less than min_hours ago` };
    const outcome = await this.run(agentId);
    if (!outcome.fired || outcome.reason === 'failed') return { ok: false, error: outcome.fired ? JSON.stringify(outcome.result) : outcome.reason };
    return { ok: true, result: JSON.stringify(outcome.result) };
  }

  async status() {
    const c = this.d.config();
    const jobs = this.d.jobs();
    const rows = new Map((await this.d.store.many<Row>('SELECT * FROM auto_dream_agents')).map((r) => [r.agent_id, r]));
    const agents = [];
    for (const a of this.d.agents()?.list() ?? []) {
      const row = rows.get(a.id);
      const running = this.running?.agentId === a.id;
      const job = row?.job_id && !row.job_id.startsWith(PENDING) ? await jobs?.get(row.job_id) : undefined;
      agents.push({
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
      });
    }
    return { enabled: c.enabled, min_hours: c.min_hours, scheduler_available: Boolean(jobs), memory_available: Boolean(this.d.memory()), agents };
  }

  /**
   * Consolidates one agent's memory now; answers what happened. One at a time in this process; a run in another
   * process at the same moment is safe (memory consolidates in one transaction) and finds nothing left to merge.
   */
  async run(agentId: string): Promise<{ fired: boolean; agent_id: string; reason: string; result?: unknown }> {
    const memory = this.d.memory();
    if (!memory) return { fired: false, agent_id: agentId, reason: 'the memory module is not running' };
    if (this.running) return { fired: false, agent_id: agentId, reason: `a consolidation is running for agent ${this.running.agentId}` };
    this.running = { agentId, startedAt: new Date().toISOString() };
    let status = 'completed';
    let result: unknown;
    try {
      result = await memory.consolidate(agentId);
    } catch (err) {
      status = 'failed';
      result = { error: (err as Error).message };
    } finally {
      this.running = undefined;
    }
    await this.d.store.run(
      `INSERT INTO auto_dream_agents (agent_id, last_run_at, last_status, last_result, runs) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (agent_id) DO UPDATE SET last_run_at = excluded.last_run_at, last_status = excluded.last_status,
         last_result = excluded.last_result, runs = auto_dream_agents.runs + 1`,
      [agentId, new Date().toISOString(), status, JSON.stringify(result)],
    );
    this.d.publish(agentId, status, { result });
    return { fired: true, agent_id: agentId, reason: status, result };
  }
}

/** Hand instances in SQLite, mirrored in memory (lists are read far more often than instances change). */
import type { Database } from 'better-sqlite3';
import { prepared } from '@talon/module-sdk';
import type { HandInstance } from '@talon/hands';

interface Row {
  id: string;
  hand_id: string;
  status: string;
  agents: string;
  jobs: string;
  triggers: string;
  degraded: number;
  events_processed: number;
  errors: number;
  last_error: string | null;
  activated_at: string;
  updated_at: string;
}

const decode = (r: Row): HandInstance => ({
  ...r,
  agents: JSON.parse(r.agents) as Record<string, string>,
  jobs: JSON.parse(r.jobs) as string[],
  triggers: JSON.parse(r.triggers) as string[],
  degraded: r.degraded === 1,
});

export const isLive = (i: HandInstance) => i.status === 'Active' || i.status === 'Paused';

export class InstanceStore {
  private readonly byId = new Map<string, HandInstance>();
  private readonly byAgent = new Map<string, string>();

  constructor(private readonly db: Database) {}

  load(): void {
    this.byId.clear();
    this.byAgent.clear();
    for (const row of prepared<[], Row>(this.db, 'SELECT * FROM hands_instances ORDER BY activated_at, id').all()) this.remember(decode(row));
  }

  list(): HandInstance[] {
    return [...this.byId.values()];
  }

  get(id: string): HandInstance | undefined {
    return this.byId.get(id);
  }

  ofHand(handId: string): HandInstance[] {
    return this.list().filter((i) => i.hand_id === handId);
  }

  ofAgent(agentId: string): HandInstance | undefined {
    const id = this.byAgent.get(agentId);
    return id ? this.byId.get(id) : undefined;
  }

  /** Inserts or replaces the whole record. */
  save(instance: HandInstance): HandInstance {
    const next = { ...instance, updated_at: new Date().toISOString() };
    prepared(
      this.db,
      `INSERT INTO hands_instances (id, hand_id, status, agents, jobs, triggers, degraded, events_processed, errors, last_error, activated_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET status = excluded.status, agents = excluded.agents, jobs = excluded.jobs, triggers = excluded.triggers,
         degraded = excluded.degraded, events_processed = excluded.events_processed, errors = excluded.errors, last_error = excluded.last_error,
         updated_at = excluded.updated_at`,
    ).run(
      next.id,
      next.hand_id,
      next.status,
      JSON.stringify(next.agents),
      JSON.stringify(next.jobs),
      JSON.stringify(next.triggers),
      next.degraded ? 1 : 0,
      next.events_processed,
      next.errors,
      next.last_error,
      next.activated_at,
      next.updated_at,
    );
    this.forgetAgents(next.id);
    this.remember(next);
    return next;
  }

  /** Counts an event of one of the instance's agents (and an error when it was one). */
  count(id: string, error: string | undefined): void {
    const i = this.byId.get(id);
    if (!i) return;
    i.events_processed++;
    if (error) {
      i.errors++;
      i.last_error = error.slice(0, 500);
    }
    prepared(this.db, 'UPDATE hands_instances SET events_processed = ?, errors = ?, last_error = ? WHERE id = ?').run(
      i.events_processed,
      i.errors,
      i.last_error,
      id,
    );
  }

  remove(id: string): void {
    prepared(this.db, 'DELETE FROM hands_instances WHERE id = ?').run(id);
    this.forgetAgents(id);
    this.byId.delete(id);
  }

  private remember(i: HandInstance): void {
    this.byId.set(i.id, i);
    for (const agentId of Object.values(i.agents)) this.byAgent.set(agentId, i.id);
  }

  private forgetAgents(id: string): void {
    const old = this.byId.get(id);
    if (old) for (const agentId of Object.values(old.agents)) if (this.byAgent.get(agentId) === id) this.byAgent.delete(agentId);
  }
}

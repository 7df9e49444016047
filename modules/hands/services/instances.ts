/**
 * Hand instances in the service's store, mirrored in memory (lists, and the instance of an agent at every event and
 * model call, are read far more often than instances change). A change is noted (topic INSTANCES): the other processes
 * of the home read the instances again. The counters are the store's: each process adds its own events to them.
 */
import { conflict, lockInTransaction, WriteBehind, type ChangeFeed, type Queries, type Store } from '@talon/module-sdk';
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

/** One event of an instance's agent to add to its counters. */
interface Counted {
  id: string;
  error: string | null;
}

const decode = (r: Row): HandInstance => ({
  ...r,
  agents: JSON.parse(r.agents) as Record<string, string>,
  jobs: JSON.parse(r.jobs) as string[],
  triggers: JSON.parse(r.triggers) as string[],
  degraded: r.degraded === 1,
});

export const isLive = (i: HandInstance) => i.status === 'Active' || i.status === 'Paused';

export const INSTANCES = 'instances';

const LIVE = `status IN ('Active', 'Paused')`;

export class InstanceStore {
  private byId = new Map<string, HandInstance>();
  private byAgent = new Map<string, string>();
  /** Event counts, added to the stored counters just after the event's work (one transaction for many events). */
  private readonly counts: WriteBehind<Counted>;

  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
    onCountLost: (err: unknown, events: number) => void,
  ) {
    this.counts = new WriteBehind<Counted>(
      store,
      (t, c) =>
        t.run('UPDATE hands_instances SET events_processed = events_processed + 1, errors = errors + ?, last_error = COALESCE(?, last_error) WHERE id = ?', [
          c.error === null ? 0 : 1,
          c.error,
          c.id,
        ]),
      (err, rows) => onCountLost(err, rows.length),
    );
  }

  /** Reads every instance (start, and when another process changed one). */
  async load(): Promise<void> {
    await this.counts.flush();
    const rows = await this.store.many<Row>('SELECT * FROM hands_instances ORDER BY activated_at, id');
    const byId = new Map<string, HandInstance>();
    const byAgent = new Map<string, string>();
    for (const instance of rows.map(decode)) {
      byId.set(instance.id, instance);
      for (const agentId of Object.values(instance.agents)) byAgent.set(agentId, instance.id);
    }
    this.byId = byId;
    this.byAgent = byAgent;
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

  /**
   * Inserts or replaces the record (the counters, and a last error a save does not replace, stay the store's: this
   * copy may not have read another process's counts yet). `exclusive`: a live instance is saved only when
   * its hand has no other live one, checked in the write (another process may have activated the hand a moment ago).
   */
  async save(instance: HandInstance, options: { exclusive?: boolean } = {}): Promise<HandInstance> {
    const next = { ...instance, updated_at: new Date().toISOString() };
    await this.store.tx(async (t) => {
      if (options.exclusive && isLive(next)) await this.checkNoOtherLive(t, next);
      await t.run(
        `INSERT INTO hands_instances (id, hand_id, status, agents, jobs, triggers, degraded, events_processed, errors, last_error, activated_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, agents = excluded.agents, jobs = excluded.jobs, triggers = excluded.triggers,
           degraded = excluded.degraded, last_error = COALESCE(excluded.last_error, hands_instances.last_error), updated_at = excluded.updated_at`,
        [
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
        ],
      );
      await this.changes.note(INSTANCES, next.id, t);
    });
    this.forgetAgents(next.id);
    this.remember(next);
    return next;
  }

  private async checkNoOtherLive(t: Queries, instance: HandInstance): Promise<void> {
    // SQLite runs one writing transaction at a time. PostgreSQL runs them side by side, and two could each find no
    // other live instance and both insert theirs: the check and the write hold the hand's lock until the commit.
    await lockInTransaction(t, `hands:${instance.hand_id}`);
    const other = await t.one<{ id: string; status: string }>(`SELECT id, status FROM hands_instances WHERE hand_id = ? AND id <> ? AND ${LIVE}`, [
      instance.hand_id,
      instance.id,
    ]);
    if (other) throw conflict(`hand '${instance.hand_id}' already has an instance (${other.id}, ${other.status}); deactivate it first`);
  }

  /** Counts an event of one of the instance's agents (and an error when it was one). */
  count(id: string, error: string | undefined): void {
    const i = this.byId.get(id);
    if (!i) return;
    const cut = error === undefined ? null : error.slice(0, 500);
    i.events_processed++;
    if (cut !== null) {
      i.errors++;
      i.last_error = cut;
    }
    this.counts.push({ id, error: cut });
  }

  /** The counters as stored (every process's events), after this process's pending counts. */
  async counters(id: string): Promise<Pick<HandInstance, 'events_processed' | 'errors' | 'last_error'> | undefined> {
    await this.counts.flush();
    return this.store.one('SELECT events_processed, errors, last_error FROM hands_instances WHERE id = ?', [id]);
  }

  async remove(id: string): Promise<void> {
    await this.store.tx(async (t) => {
      await t.run('DELETE FROM hands_instances WHERE id = ?', [id]);
      await this.changes.note(INSTANCES, id, t);
    });
    this.forgetAgents(id);
    this.byId.delete(id);
  }

  /** Writes the pending counts (the module stops). */
  flush(): Promise<void> {
    return this.counts.flush();
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

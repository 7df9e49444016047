/**
 * Triggers and their cooldown stamps in the store (both survive restarts). Every write notes the change (topic
 * 'triggers', the trigger id), so the other processes' engines reload the trigger; a fire is one transaction whose
 * cooldown stamp is one conditional upsert, so of several processes only one fires a trigger per subject and cooldown.
 */
import { randomUUID } from 'node:crypto';
import type { ChangeFeed, Queries, SqlValue, Store } from '@talon/module-sdk';
import type { SessionMode } from '@talon/tasks';
import type { Pattern } from './pattern.ts';

/** A fire's turn that has not reported yet (triggers_fires): what another process needs to resume it. */
export interface PendingFire {
  id: string;
  /** The agent the turn runs on (the trigger's target or owner). */
  agentId: string;
  /** The node (process) that runs the turn and records its delivery. */
  node: string;
  cause: string;
  /** The turn's message, made from the event. */
  prompt: string;
  /** The chain depth the turn runs at. */
  depth: number;
}

export interface Trigger {
  id: string;
  agent_id: string;
  pattern: Pattern;
  prompt_template: string;
  enabled: boolean;
  fire_count: number;
  max_fires: number;
  created_at: string;
  cooldown_secs: number | null;
  session_mode: SessionMode | null;
  target_agent_id: string | null;
  workflow_id: string | null;
  last_fired_at: string | null;
  updated_at: string;
}

/** What a create or a PATCH writes. */
export type TriggerFields = Pick<
  Trigger,
  'agent_id' | 'pattern' | 'prompt_template' | 'enabled' | 'max_fires' | 'cooldown_secs' | 'session_mode' | 'target_agent_id' | 'workflow_id'
>;

type Row = Omit<Trigger, 'pattern' | 'enabled'> & { pattern: string; enabled: number };

const COLUMNS =
  'id, agent_id, pattern, prompt_template, enabled, fire_count, max_fires, created_at, cooldown_secs, session_mode, target_agent_id, workflow_id, last_fired_at, updated_at';
/** The change-feed topic of the triggers' rows; the key is a trigger id. */
export const TOPIC = 'triggers';

/** A fire that must not happen after all: the transaction is rolled back. */
class NotFired extends Error {}

const FIELDS = ['agent_id', 'pattern', 'prompt_template', 'enabled', 'max_fires', 'cooldown_secs', 'session_mode', 'target_agent_id', 'workflow_id'] as const;

export class TriggerStore {
  constructor(
    private readonly store: Store,
    private readonly changes: Pick<ChangeFeed, 'note'>,
  ) {}

  async all(): Promise<Trigger[]> {
    return (await this.store.many<Row>(`SELECT ${COLUMNS} FROM triggers_triggers ORDER BY seq`)).map(decode);
  }

  get(id: string, q: Queries = this.store): Promise<Trigger | undefined> {
    return q.one<Row>(`SELECT ${COLUMNS} FROM triggers_triggers WHERE id = ?`, [id]).then((row) => row && decode(row));
  }

  create(fields: TriggerFields): Promise<Trigger> {
    const id = randomUUID();
    const at = new Date().toISOString();
    return this.store.tx(async (t) => {
      await t.run(`INSERT INTO triggers_triggers (id, ${FIELDS.join(', ')}, created_at, updated_at) VALUES (?, ${FIELDS.map(() => '?').join(', ')}, ?, ?)`, [
        id,
        ...encode(fields),
        at,
        at,
      ]);
      await this.changes.note(TOPIC, id, t);
      return (await this.get(id, t))!;
    });
  }

  /** Writes the fields; a changed pattern forgets the cooldown stamps of the old one. */
  update(id: string, fields: TriggerFields, patternChanged: boolean): Promise<Trigger> {
    return this.store.tx(async (t) => {
      await t.run(`UPDATE triggers_triggers SET ${FIELDS.map((f) => `${f} = ?`).join(', ')}, updated_at = ? WHERE id = ?`, [
        ...encode(fields),
        new Date().toISOString(),
        id,
      ]);
      if (patternChanged) await t.run('DELETE FROM triggers_cooldowns WHERE trigger_id = ?', [id]);
      await this.changes.note(TOPIC, id, t);
      return (await this.get(id, t))!;
    });
  }

  delete(id: string): Promise<boolean> {
    return this.store.tx(async (t) => {
      const { changes } = await t.run('DELETE FROM triggers_triggers WHERE id = ?', [id]);
      if (changes) await this.changes.note(TOPIC, id, t);
      return changes > 0;
    });
  }

  /** Triggers owned by an agent go; triggers aimed at it are disabled. Returns the ids touched. */
  retireAgent(agentId: string): Promise<string[]> {
    return this.store.tx(async (t) => {
      const touched = await t.many<{ id: string }>('SELECT id FROM triggers_triggers WHERE agent_id = ? OR target_agent_id = ?', [agentId, agentId]);
      await t.run('DELETE FROM triggers_triggers WHERE agent_id = ?', [agentId]);
      await t.run('UPDATE triggers_triggers SET enabled = 0, updated_at = ? WHERE target_agent_id = ?', [new Date().toISOString(), agentId]);
      for (const { id } of touched) await this.changes.note(TOPIC, id, t);
      return touched.map((r) => r.id);
    });
  }

  /** Triggers that start a deleted workflow are disabled. */
  retireWorkflow(workflowId: string): Promise<string[]> {
    return this.store.tx(async (t) => {
      const touched = await t.many<{ id: string }>('SELECT id FROM triggers_triggers WHERE workflow_id = ?', [workflowId]);
      await t.run('UPDATE triggers_triggers SET enabled = 0, updated_at = ? WHERE workflow_id = ?', [new Date().toISOString(), workflowId]);
      for (const { id } of touched) await this.changes.note(TOPIC, id, t);
      return touched.map((r) => r.id);
    });
  }

  /**
   * One fire, if it may happen: the count (only while enabled and under max_fires; the fire that reaches it disables
   * the trigger) and the cooldown stamp for the subject, set by one conditional upsert only when the stored stamp is
   * at least `cooldownMs` old (or more than `cooldownMs` in the future: the clock went back). Of two processes firing
   * at once, the second finds the first's stamp and fires nothing, also when the first's time is a little later than
   * its own (on PostgreSQL the later one may commit first). Answers the trigger as it now is, or undefined when it did not fire.
   * `pending` is written in the same commit: a turn lost before its delivery row is written can be told (see
   * DeliveryLog.loseFires), rather than the fire using up the cooldown with no trace.
   */
  async recordFire(id: string, subject: string, at: number, cooldownMs: number, pending?: PendingFire): Promise<Trigger | undefined> {
    try {
      return await this.store.tx(async (t) => {
        const counted = await t.run(
          `UPDATE triggers_triggers SET fire_count = fire_count + 1, last_fired_at = ?,
           enabled = CASE WHEN max_fires > 0 AND fire_count + 1 >= max_fires THEN 0 ELSE enabled END
           WHERE id = ? AND enabled = 1 AND (max_fires = 0 OR fire_count < max_fires)`,
          [new Date(at).toISOString(), id],
        );
        if (!counted.changes) throw new NotFired();
        const stamped = await t.one<{ fired_at: number }>(
          `INSERT INTO triggers_cooldowns (trigger_id, subject, fired_at) VALUES (?, ?, ?)
           ON CONFLICT (trigger_id, subject) DO UPDATE SET fired_at = excluded.fired_at
           WHERE triggers_cooldowns.fired_at <= excluded.fired_at - ? OR triggers_cooldowns.fired_at > excluded.fired_at + ?
           RETURNING fired_at`,
          [id, subject, at, cooldownMs, cooldownMs],
        );
        if (!stamped) throw new NotFired();
        if (pending)
          await t.run('INSERT INTO triggers_fires (id, trigger_id, agent_id, node, cause, prompt, depth, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
            pending.id,
            id,
            pending.agentId,
            pending.node,
            pending.cause,
            pending.prompt,
            pending.depth,
            new Date(at).toISOString(),
          ]);
        await this.changes.note(TOPIC, id, t);
        return this.get(id, t);
      });
    } catch (err) {
      if (err instanceof NotFired) return undefined;
      throw err;
    }
  }

  cooldowns(): Promise<Array<{ trigger_id: string; subject: string; fired_at: number }>> {
    return this.store.many<{ trigger_id: string; subject: string; fired_at: number }>('SELECT trigger_id, subject, fired_at FROM triggers_cooldowns');
  }

  /** Stamps older than their trigger's cooldown (or the default) no longer matter. */
  async pruneCooldowns(now: number, defaultSecs: number): Promise<void> {
    await this.store.run(
      `DELETE FROM triggers_cooldowns WHERE fired_at < ? - 1000 * COALESCE((SELECT cooldown_secs FROM triggers_triggers t WHERE t.id = trigger_id), ?)`,
      [now, defaultSecs],
    );
  }
}

function encode(f: TriggerFields): SqlValue[] {
  return FIELDS.map((k) => (k === 'pattern' ? JSON.stringify(f.pattern) : k === 'enabled' ? (f.enabled ? 1 : 0) : f[k]));
}

function decode(row: Row): Trigger {
  return { ...row, pattern: JSON.parse(row.pattern) as Pattern, enabled: row.enabled === 1 };
}

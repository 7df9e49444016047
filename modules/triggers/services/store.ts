/** Triggers and their cooldown stamps in SQLite (both survive restarts). */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { statements } from '@talon/module-sdk';
import type { SessionMode } from '@talon/tasks';
import type { Pattern } from './pattern.ts';

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
const FIELDS = ['agent_id', 'pattern', 'prompt_template', 'enabled', 'max_fires', 'cooldown_secs', 'session_mode', 'target_agent_id', 'workflow_id'] as const;

export class TriggerStore {
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly db: Database) {
    this.sql = statements(db);
  }

  all(): Trigger[] {
    return this.sql<[], Row>(`SELECT ${COLUMNS} FROM triggers_triggers ORDER BY seq`).all().map(decode);
  }

  get(id: string): Trigger | undefined {
    const row = this.sql<[string], Row>(`SELECT ${COLUMNS} FROM triggers_triggers WHERE id = ?`).get(id);
    return row && decode(row);
  }

  create(fields: TriggerFields): Trigger {
    const id = randomUUID();
    const at = new Date().toISOString();
    this.sql(`INSERT INTO triggers_triggers (id, ${FIELDS.join(', ')}, created_at, updated_at) VALUES (?, ${FIELDS.map(() => '?').join(', ')}, ?, ?)`).run(
      id,
      ...encode(fields),
      at,
      at,
    );
    return this.get(id)!;
  }

  /** Writes the fields; a changed pattern forgets the cooldown stamps of the old one. */
  update(id: string, fields: TriggerFields, patternChanged: boolean): Trigger {
    this.db.transaction(() => {
      this.sql(`UPDATE triggers_triggers SET ${FIELDS.map((f) => `${f} = ?`).join(', ')}, updated_at = ? WHERE id = ?`).run(
        ...encode(fields),
        new Date().toISOString(),
        id,
      );
      if (patternChanged) this.sql('DELETE FROM triggers_cooldowns WHERE trigger_id = ?').run(id);
    })();
    return this.get(id)!;
  }

  delete(id: string): boolean {
    return this.sql('DELETE FROM triggers_triggers WHERE id = ?').run(id).changes > 0;
  }

  /** Triggers owned by an agent go; triggers aimed at it are disabled. Returns the ids touched. */
  retireAgent(agentId: string): string[] {
    const touched = this.sql<[string, string], { id: string }>('SELECT id FROM triggers_triggers WHERE agent_id = ? OR target_agent_id = ?').all(
      agentId,
      agentId,
    );
    this.sql('DELETE FROM triggers_triggers WHERE agent_id = ?').run(agentId);
    this.sql('UPDATE triggers_triggers SET enabled = 0, updated_at = ? WHERE target_agent_id = ?').run(new Date().toISOString(), agentId);
    return touched.map((t) => t.id);
  }

  /** Triggers that start a deleted workflow are disabled. */
  retireWorkflow(workflowId: string): string[] {
    const touched = this.sql<[string], { id: string }>('SELECT id FROM triggers_triggers WHERE workflow_id = ?').all(workflowId);
    this.sql('UPDATE triggers_triggers SET enabled = 0, updated_at = ? WHERE workflow_id = ?').run(new Date().toISOString(), workflowId);
    return touched.map((t) => t.id);
  }

  /** One fire: the count, the stamp for the subject, and the self-disable when max_fires is reached. */
  recordFire(id: string, subject: string, at: number): Trigger | undefined {
    const iso = new Date(at).toISOString();
    this.db.transaction(() => {
      this.sql(
        `UPDATE triggers_triggers SET fire_count = fire_count + 1, last_fired_at = ?,
         enabled = CASE WHEN max_fires > 0 AND fire_count + 1 >= max_fires THEN 0 ELSE enabled END WHERE id = ?`,
      ).run(iso, id);
      this.sql('INSERT INTO triggers_cooldowns (trigger_id, subject, fired_at) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET fired_at = excluded.fired_at').run(
        id,
        subject,
        at,
      );
    })();
    return this.get(id);
  }

  cooldowns(): Array<{ trigger_id: string; subject: string; fired_at: number }> {
    return this.sql<[], { trigger_id: string; subject: string; fired_at: number }>('SELECT trigger_id, subject, fired_at FROM triggers_cooldowns').all();
  }

  /** Stamps older than their trigger's cooldown (or the default) no longer matter. */
  pruneCooldowns(now: number, defaultSecs: number): void {
    this.sql(
      `DELETE FROM triggers_cooldowns WHERE fired_at < ? - 1000 * COALESCE((SELECT cooldown_secs FROM triggers_triggers t WHERE t.id = trigger_id), ?)`,
    ).run(now, defaultSecs);
  }
}

function encode(f: TriggerFields): unknown[] {
  return FIELDS.map((k) => (k === 'pattern' ? JSON.stringify(f.pattern) : k === 'enabled' ? (f.enabled ? 1 : 0) : f[k]));
}

function decode(row: Row): Trigger {
  return { ...row, pattern: JSON.parse(row.pattern) as Pattern, enabled: row.enabled === 1 };
}

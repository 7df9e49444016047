/** Bindings, kept sorted by specificity: peer 8, guild 4, roles 2, account 2, channel 1 (ties: oldest first). */
import type { Database } from 'better-sqlite3';
import { prepared } from '@talon/module-sdk';
import type { Binding, BindingRouter, MatchRule } from '@talon/bindings';

const weight = (r: MatchRule) => (r.peer_id ? 8 : 0) + (r.guild_id ? 4 : 0) + (r.roles?.length ? 2 : 0) + (r.account_id ? 2 : 0) + (r.channel ? 1 : 0);

interface Row {
  id: number;
  agent: string;
  match_rule: string;
  created_at: string;
}

export class BindingStore implements BindingRouter {
  constructor(private readonly db: Database) {}

  private sorted(): Array<Row & { rule: MatchRule }> {
    const rows = (prepared(this.db, 'SELECT * FROM bindings_rules ORDER BY id').all() as Row[]).map((r) => ({
      ...r,
      rule: JSON.parse(r.match_rule) as MatchRule,
    }));
    return rows.sort((a, b) => weight(b.rule) - weight(a.rule) || a.id - b.id);
  }

  list(): Binding[] {
    return this.sorted().map((r, index) => ({ index, agent: r.agent, match_rule: r.rule, created_at: r.created_at }));
  }

  add(agent: string, rule: MatchRule): Binding {
    const { lastInsertRowid } = prepared(this.db, 'INSERT INTO bindings_rules (agent, match_rule, created_at) VALUES (?, ?, ?)').run(
      agent,
      JSON.stringify(rule),
      new Date().toISOString(),
    );
    return this.list()[this.sorted().findIndex((r) => r.id === Number(lastInsertRowid))];
  }

  /** Removes the binding at this position of the list; false when there is none. */
  remove(index: number): boolean {
    const row = this.sorted()[index];
    if (!row) return false;
    prepared(this.db, 'DELETE FROM bindings_rules WHERE id = ?').run(row.id);
    return true;
  }

  route(m: { channel: string; account_id?: string; peer_id?: string; guild_id?: string; roles?: string[] }): string | undefined {
    const hit = this.sorted().find(({ rule: r }) => {
      if (r.channel && r.channel !== m.channel) return false;
      if (r.account_id && r.account_id !== m.account_id) return false;
      if (r.peer_id && r.peer_id !== m.peer_id) return false;
      if (r.guild_id && r.guild_id !== m.guild_id) return false;
      return !r.roles?.length || r.roles.some((role) => m.roles?.includes(role));
    });
    return hit?.agent;
  }
}

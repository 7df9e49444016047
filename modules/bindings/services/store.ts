/**
 * Bindings, kept sorted by specificity: peer 8, guild 4, roles 2, account 2, channel 1 (ties: oldest first).
 * Routing reads them from memory; a change is written to the database and noted ('rules'), and the other
 * processes on the database read the list again.
 */
import type { ChangeFeed, Store } from '@talon/module-sdk';
import type { Binding, BindingRouter, MatchRule } from '@talon/bindings';

const weight = (r: MatchRule) => (r.peer_id ? 8 : 0) + (r.guild_id ? 4 : 0) + (r.roles?.length ? 2 : 0) + (r.account_id ? 2 : 0) + (r.channel ? 1 : 0);

/** The change-feed topic of the binding list. */
export const RULES_TOPIC = 'rules';

interface Row {
  id: number;
  agent: string;
  match_rule: string;
  created_at: string;
}

type Rule = Row & { rule: MatchRule };

export class BindingStore implements BindingRouter {
  /** Every binding, most specific first. */
  private sorted: Rule[] = [];
  /** Counts the reads begun: one that an older read overtook is not kept. */
  private reads = 0;

  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
  ) {
    changes.on(RULES_TOPIC, () => this.load());
  }

  /** Reads the list (at start, after a change here, and when another process noted one). */
  async load(): Promise<void> {
    const read = ++this.reads;
    const rows = await this.store.many<Row>('SELECT id, agent, match_rule, created_at FROM bindings_rules ORDER BY id');
    if (read !== this.reads) return;
    this.sorted = rows.map((r) => ({ ...r, rule: JSON.parse(r.match_rule) as MatchRule })).sort((a, b) => weight(b.rule) - weight(a.rule) || a.id - b.id);
  }

  list(): Binding[] {
    return this.sorted.map((r, index) => ({ index, agent: r.agent, match_rule: r.rule, created_at: r.created_at }));
  }

  async add(agent: string, rule: MatchRule): Promise<Binding> {
    const id = await this.store.tx(async (t) => {
      const row = await t.one<{ id: number }>('INSERT INTO bindings_rules (agent, match_rule, created_at) VALUES (?, ?, ?) RETURNING id', [
        agent,
        JSON.stringify(rule),
        new Date().toISOString(),
      ]);
      await this.changes.note(RULES_TOPIC, '', t);
      return row!.id;
    });
    await this.load();
    const index = this.sorted.findIndex((r) => r.id === id);
    return this.list()[index];
  }

  /** Removes the binding at this position of the list; false when there is none. */
  async remove(index: number): Promise<boolean> {
    const row = this.sorted[index];
    if (!row) return false;
    const changes = await this.store.tx(async (t) => {
      const result = await t.run('DELETE FROM bindings_rules WHERE id = ?', [row.id]);
      await this.changes.note(RULES_TOPIC, '', t);
      return result.changes;
    });
    await this.load();
    return changes > 0;
  }

  route(m: { channel: string; account_id?: string; peer_id?: string; guild_id?: string; roles?: string[] }): string | undefined {
    const hit = this.sorted.find(({ rule: r }) => {
      if (r.channel && r.channel !== m.channel) return false;
      if (r.account_id && r.account_id !== m.account_id) return false;
      if (r.peer_id && r.peer_id !== m.peer_id) return false;
      if (r.guild_id && r.guild_id !== m.guild_id) return false;
      return !r.roles?.length || r.roles.some((role) => m.roles?.includes(role));
    });
    return hit?.agent;
  }
}

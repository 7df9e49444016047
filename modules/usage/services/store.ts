import { WriteBehind, type ChangeFeed, type Queries } from '@talon/module-sdk';

export interface CallRow {
  at: number;
  agentId: string | null;
  agentName: string | null;
  sessionId: string | null;
  purpose: string | null;
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  latencyMs: number;
  ok: boolean;
  error: string | null;
  /** 'llm' for a model call, else the media kind (image, speech, music, video, transcription). */
  kind: string;
  /** What a media call used, in `unit` (images, characters, seconds, songs); null for a model call. */
  units: number | null;
  unit: string | null;
  /** Units were used and the catalogue has no price for them: recorded at cost 0. */
  unpriced: boolean;
}

export interface Sums {
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  requests: number;
}

export interface ModelRow {
  model: string;
  provider: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  request_count: number;
}

/** Calls of one purpose ('turn', 'compact', 'memory_extraction'…; null when the caller named none). */
export interface PurposeRow {
  purpose: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  request_count: number;
}

/** Media calls of one kind, provider, model and unit. */
export interface MediaRow {
  kind: string;
  provider: string;
  model: string;
  unit: string | null;
  units: number;
  cost_usd: number;
  request_count: number;
  unpriced_count: number;
}

export interface DayRow extends Sums {
  date: string;
}

export interface AgentCostRow {
  agent_id: string;
  agent_name: string | null;
  total_cost_usd: number;
  today_cost_usd: number;
}

export interface Limits {
  daily_limit_usd: number;
  monthly_limit_usd: number;
}

const SUMS = `COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
  COALESCE(SUM(cost_usd), 0) AS cost_usd, COUNT(*) AS requests`;

const DAY_MS = 86_400_000;

/** The change-feed topic of the budgets (usage_budgets rows, keyed by scope). */
export const BUDGETS_TOPIC = 'budgets';

/**
 * Storage of the usage module (tables from migrations/). A call's row, model or media call, is written just after the
 * answer went out (WriteBehind: no commit on the call's way); every read writes what is queued first, so budgets
 * and reports always count every call of this process. The budgets are few and read on every model call: they are
 * all kept in memory (load() at start) and reloaded when another process changes one.
 */
export class UsageStore {
  private readonly queue: WriteBehind<CallRow>;
  private readonly budgets = new Map<string, Limits>();

  constructor(
    private readonly store: Queries,
    private readonly changes: ChangeFeed,
    onError: (err: unknown, rows: readonly CallRow[]) => void,
  ) {
    this.queue = new WriteBehind(
      store,
      (t, r) =>
        t.run(
          `INSERT INTO usage_calls (at, agent_id, agent_name, session_id, purpose, provider, model, input_tokens, output_tokens, cost_usd, latency_ms, ok, error,
          kind, units, unit, unpriced) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [
            r.at,
            r.agentId,
            r.agentName,
            r.sessionId,
            r.purpose,
            r.provider,
            r.model,
            r.inputTokens,
            r.outputTokens,
            r.costUsd,
            r.latencyMs,
            r.ok ? 1 : 0,
            r.error,
            r.kind,
            r.units,
            r.unit,
            r.unpriced ? 1 : 0,
          ],
        ),
      onError,
    );
    changes.on(BUDGETS_TOPIC, (scope) => this.reload(scope));
  }

  /** Reads every budget into memory (the module's start). */
  async load(): Promise<void> {
    const rows = await this.store.many<Limits & { scope: string }>('SELECT scope, daily_limit_usd, monthly_limit_usd FROM usage_budgets');
    this.budgets.clear();
    for (const { scope, ...limits } of rows) this.budgets.set(scope, limits);
  }

  /** Another process changed the budget of `scope` ('' for all of them). */
  private async reload(scope: string): Promise<void> {
    if (!scope) return this.load();
    const row = await this.store.one<Limits>('SELECT daily_limit_usd, monthly_limit_usd FROM usage_budgets WHERE scope = ?', [scope]);
    if (row) this.budgets.set(scope, { daily_limit_usd: row.daily_limit_usd, monthly_limit_usd: row.monthly_limit_usd });
    else this.budgets.delete(scope);
  }

  record(row: CallRow): void {
    this.queue.push(row);
  }

  /** Writes the queued rows now (reads do it themselves; the module does it when it stops). */
  flush(): Promise<void> {
    return this.queue.flush();
  }

  async sums(since: number, agentId?: string): Promise<Sums> {
    await this.queue.flush();
    const row =
      agentId === undefined
        ? await this.store.one<Sums>(`SELECT ${SUMS} FROM usage_calls WHERE at >= ?`, [since])
        : await this.store.one<Sums>(`SELECT ${SUMS} FROM usage_calls WHERE agent_id = ? AND at >= ?`, [agentId, since]);
    return row ?? { input_tokens: 0, output_tokens: 0, cost_usd: 0, requests: 0 };
  }

  async activeAgents(since: number): Promise<number> {
    await this.queue.flush();
    const row = await this.store.one<{ n: number }>('SELECT COUNT(DISTINCT agent_id) AS n FROM usage_calls WHERE at >= ? AND agent_id IS NOT NULL', [since]);
    return Number(row?.n ?? 0);
  }

  async byModel(): Promise<ModelRow[]> {
    await this.queue.flush();
    return this.store.many<ModelRow>(`SELECT model, provider, COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
      COALESCE(SUM(cost_usd), 0) AS cost_usd, COUNT(*) AS request_count FROM usage_calls GROUP BY provider, model
      ORDER BY cost_usd DESC, request_count DESC, model`);
  }

  async byPurpose(since: number): Promise<PurposeRow[]> {
    await this.queue.flush();
    return this.store.many<PurposeRow>(
      `SELECT purpose, COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
      COALESCE(SUM(cost_usd), 0) AS cost_usd, COUNT(*) AS request_count FROM usage_calls WHERE at >= ? GROUP BY purpose
      ORDER BY cost_usd DESC, request_count DESC, purpose`,
      [since],
    );
  }

  /** The media calls since `since`, per kind, provider, model and unit, the dearest first. */
  async media(since: number): Promise<MediaRow[]> {
    await this.queue.flush();
    const rows = await this.store.many<MediaRow>(
      `SELECT kind, provider, model, unit, COALESCE(SUM(units), 0) AS units, COALESCE(SUM(cost_usd), 0) AS cost_usd, COUNT(*) AS request_count,
      COALESCE(SUM(unpriced), 0) AS unpriced_count FROM usage_calls WHERE at >= ? AND kind <> 'llm' GROUP BY kind, provider, model, unit
      ORDER BY cost_usd DESC, request_count DESC, kind, provider, model`,
      [since],
    );
    // Counts are numbers on every engine (a bigint may come back as text).
    return rows.map((r) => ({ ...r, units: Number(r.units), request_count: Number(r.request_count), unpriced_count: Number(r.unpriced_count) }));
  }

  /** Sums per UTC day since `since`: grouped on the day number (integer division of epoch-ms), dated in JS. */
  async daily(since: number): Promise<DayRow[]> {
    await this.queue.flush();
    const rows = await this.store.many<Sums & { day: number }>(
      `SELECT at / ${DAY_MS} AS day, ${SUMS} FROM usage_calls WHERE at >= ? GROUP BY at / ${DAY_MS} ORDER BY day`,
      [since],
    );
    return rows.map(({ day, ...sums }) => ({ date: new Date(Number(day) * DAY_MS).toISOString().slice(0, 10), ...sums }));
  }

  async agentCosts(todayStart: number): Promise<AgentCostRow[]> {
    await this.queue.flush();
    return this.store.many<AgentCostRow>(
      `SELECT agent_id, MAX(agent_name) AS agent_name, COALESCE(SUM(cost_usd), 0) AS total_cost_usd,
      COALESCE(SUM(CASE WHEN at >= ? THEN cost_usd ELSE 0 END), 0) AS today_cost_usd
      FROM usage_calls WHERE agent_id IS NOT NULL GROUP BY agent_id`,
      [todayStart],
    );
  }

  /** Stored limits of a scope ('global' or an agent id), undefined when never set. */
  limits(scope: string): Limits | undefined {
    return this.budgets.get(scope);
  }

  /** Stores a scope's limits, and tells the other processes so they reload it. */
  async setLimits(scope: string, limits: Limits): Promise<void> {
    await this.store.tx(async (t) => {
      await t.run(
        `INSERT INTO usage_budgets (scope, daily_limit_usd, monthly_limit_usd, updated_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (scope) DO UPDATE SET daily_limit_usd = excluded.daily_limit_usd, monthly_limit_usd = excluded.monthly_limit_usd,
        updated_at = excluded.updated_at`,
        [scope, limits.daily_limit_usd, limits.monthly_limit_usd, new Date().toISOString()],
      );
      await this.changes.note(BUDGETS_TOPIC, scope, t);
    });
    this.budgets.set(scope, { daily_limit_usd: limits.daily_limit_usd, monthly_limit_usd: limits.monthly_limit_usd });
  }
}

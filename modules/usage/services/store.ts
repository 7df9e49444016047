import type { Database, Statement } from 'better-sqlite3';
import { WriteBehind } from '@talon/module-sdk';

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

/**
 * SQLite access of the usage module (tables from migrations/0001_usage.sql). A call's row is written just after
 * the answer went out (WriteBehind: no commit on the call's way); every read writes what is queued first, so
 * budgets and reports always count every call. Limits are kept in memory between changes.
 */
export class UsageStore {
  private readonly queue: WriteBehind<CallRow>;
  private readonly limitCache = new Map<string, Limits | undefined>();
  private readonly insert: Statement;
  private readonly sumsSince: Statement;
  private readonly agentSumsSince: Statement;
  private readonly activeSince: Statement;
  private readonly byModelStmt: Statement;
  private readonly byPurposeStmt: Statement;
  private readonly dailyStmt: Statement;
  private readonly agentCostsStmt: Statement;
  private readonly getLimits: Statement;
  private readonly putLimits: Statement;

  constructor(db: Database, onError: (err: unknown, rows: readonly CallRow[]) => void) {
    this.queue = new WriteBehind(db, (row) => this.insert.run({ ...row, ok: row.ok ? 1 : 0 }), onError);
    this.insert =
      db.prepare(`INSERT INTO usage_calls (at, agent_id, agent_name, session_id, purpose, provider, model, input_tokens, output_tokens, cost_usd, latency_ms, ok, error)
      VALUES (@at, @agentId, @agentName, @sessionId, @purpose, @provider, @model, @inputTokens, @outputTokens, @costUsd, @latencyMs, @ok, @error)`);
    this.sumsSince = db.prepare(`SELECT ${SUMS} FROM usage_calls WHERE at >= ?`);
    this.agentSumsSince = db.prepare(`SELECT ${SUMS} FROM usage_calls WHERE agent_id = ? AND at >= ?`);
    this.activeSince = db.prepare('SELECT COUNT(DISTINCT agent_id) AS n FROM usage_calls WHERE at >= ? AND agent_id IS NOT NULL');
    this.byModelStmt = db.prepare(`SELECT model, provider, COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
      COALESCE(SUM(cost_usd), 0) AS cost_usd, COUNT(*) AS request_count FROM usage_calls GROUP BY provider, model ORDER BY cost_usd DESC, request_count DESC, model`);
    this.byPurposeStmt = db.prepare(`SELECT purpose, COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
      COALESCE(SUM(cost_usd), 0) AS cost_usd, COUNT(*) AS request_count FROM usage_calls WHERE at >= ? GROUP BY purpose
      ORDER BY cost_usd DESC, request_count DESC, purpose`);
    this.dailyStmt = db.prepare(
      `SELECT strftime('%Y-%m-%d', at / 1000, 'unixepoch') AS date, ${SUMS} FROM usage_calls WHERE at >= ? GROUP BY date ORDER BY date`,
    );
    this.agentCostsStmt = db.prepare(`SELECT agent_id, MAX(agent_name) AS agent_name, COALESCE(SUM(cost_usd), 0) AS total_cost_usd,
      COALESCE(SUM(CASE WHEN at >= @today THEN cost_usd ELSE 0 END), 0) AS today_cost_usd
      FROM usage_calls WHERE agent_id IS NOT NULL GROUP BY agent_id`);
    this.getLimits = db.prepare('SELECT daily_limit_usd, monthly_limit_usd FROM usage_budgets WHERE scope = ?');
    this.putLimits = db.prepare(`INSERT INTO usage_budgets (scope, daily_limit_usd, monthly_limit_usd, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (scope) DO UPDATE SET daily_limit_usd = excluded.daily_limit_usd, monthly_limit_usd = excluded.monthly_limit_usd, updated_at = excluded.updated_at`);
  }

  record(row: CallRow): void {
    this.queue.push(row);
  }

  /** Writes the queued rows now (reads do it themselves; the module does it when it stops). */
  flush(): void {
    this.queue.flush();
  }

  sums(since: number, agentId?: string): Sums {
    this.queue.flush();
    return (agentId === undefined ? this.sumsSince.get(since) : this.agentSumsSince.get(agentId, since)) as Sums;
  }

  activeAgents(since: number): number {
    this.queue.flush();
    return (this.activeSince.get(since) as { n: number }).n;
  }

  byModel(): ModelRow[] {
    this.queue.flush();
    return this.byModelStmt.all() as ModelRow[];
  }

  byPurpose(since: number): PurposeRow[] {
    this.queue.flush();
    return this.byPurposeStmt.all(since) as PurposeRow[];
  }

  daily(since: number): DayRow[] {
    this.queue.flush();
    return this.dailyStmt.all(since) as DayRow[];
  }

  agentCosts(todayStart: number): AgentCostRow[] {
    this.queue.flush();
    return this.agentCostsStmt.all({ today: todayStart }) as AgentCostRow[];
  }

  /** Stored limits of a scope ('global' or an agent id), undefined when never set. */
  limits(scope: string): Limits | undefined {
    if (!this.limitCache.has(scope)) {
      if (this.limitCache.size >= 10_000) this.limitCache.clear();
      this.limitCache.set(scope, this.getLimits.get(scope) as Limits | undefined);
    }
    return this.limitCache.get(scope);
  }

  setLimits(scope: string, limits: Limits): void {
    this.putLimits.run(scope, limits.daily_limit_usd, limits.monthly_limit_usd, new Date().toISOString());
    this.limitCache.delete(scope);
  }
}

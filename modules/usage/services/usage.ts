import type { CallCheck, CallRecord } from '@talon/llm';
import type { CatalogService } from '@talon/catalog';
import type { AgentRecord, AgentRegistry } from '@talon/agents';
import type { MediaCallCheck, MediaCallRecord } from '@talon/media';
import type { AgentBudgetView, BudgetStatus, BudgetView, UsagePeriod, UsageService, UsageSummary, UsageTotals } from '../api.ts';
import type { UsageConfig } from '../config.ts';
import { nextHour, periodStart, usd } from './periods.ts';
import type { AgentCostRow, DayRow, Limits, MediaRow, ModelRow, PurposeRow, UsageStore } from './store.ts';
import { priceMedia } from './media.ts';

export interface UsageDeps {
  store: UsageStore;
  config: () => UsageConfig;
  /** Optional modules, looked up on each use (they may load after usage). */
  catalog: () => CatalogService | undefined;
  agents: () => AgentRegistry | undefined;
  now?: () => number;
}

export interface Refusal {
  status: number;
  error: string;
}

/** HTTP status of a refusal for money (budgets) and for the hourly token quota. */
export const BUDGET_STATUS = 402;
export const QUOTA_STATUS = 429;

const GLOBAL = 'global';

/** Metering, analytics, budgets and quotas over the usage store. */
export class Usage implements UsageService {
  private readonly now: () => number;

  constructor(private readonly deps: UsageDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Records one upstream call, priced with the catalogue's prices at this moment. */
  meter(record: CallRecord): void {
    const { inputTokens, outputTokens } = record.usage;
    const agentId = record.meta.agentId ?? null;
    this.deps.store.record({
      at: this.now(),
      agentId,
      agentName: this.agentName(agentId),
      sessionId: record.meta.sessionId ?? null,
      purpose: record.meta.purpose ?? null,
      provider: record.provider,
      model: record.model,
      inputTokens,
      outputTokens,
      costUsd: this.price(record.provider, record.model, inputTokens, outputTokens),
      latencyMs: Math.round(record.latencyMs),
      ok: record.ok,
      error: record.error ?? null,
      kind: 'llm',
      units: null,
      unit: null,
      unpriced: false,
    });
  }

  /** Records one media call (mediaHooks.afterCall): units priced with the catalogue's media prices at this moment. */
  meterMedia(record: MediaCallRecord): void {
    const agentId = record.agentId ?? null;
    const { costUsd, unpriced } = priceMedia(record, this.deps.catalog());
    this.deps.store.record({
      at: this.now(),
      agentId,
      agentName: this.agentName(agentId),
      sessionId: null,
      // The purpose names the kind, so GET /api/usage's by_purpose shows media spend apart from the model calls.
      purpose: `media.${record.kind}`,
      provider: record.provider,
      model: record.model,
      inputTokens: 0,
      outputTokens: 0,
      costUsd,
      latencyMs: Math.round(record.latencyMs),
      ok: record.ok,
      error: record.error ?? null,
      kind: record.kind,
      units: record.units,
      unit: record.unit,
      unpriced,
    });
  }

  private agentName(agentId: string | null): string | null {
    return agentId ? (this.deps.agents()?.get(agentId)?.name ?? null) : null;
  }

  /** The beforeCall verdict: a refusal when the call would break a budget or an hourly token quota. */
  async check(call: CallCheck): Promise<Refusal | undefined> {
    const now = this.now();
    const estimate = this.price(call.provider, call.model, call.estimatedInputTokens, 0);
    const tokens = call.estimatedInputTokens;
    const global =
      (await this.money('global', this.globalLimits(), now, estimate)) ?? (await this.tokens('global', this.deps.config().hourly_token_limit, now, tokens));
    if (global) return global;
    const agentId = call.meta.agentId;
    if (!agentId) return undefined;
    const agent = this.deps.agents()?.get(agentId);
    const scope = this.agentScope(agentId);
    return (
      (await this.money(scope, this.agentLimits(agentId), now, estimate, agentId)) ?? this.tokens(scope, agent?.maxLlmTokensPerHour ?? 0, now, tokens, agentId)
    );
  }

  /**
   * The verdict on a media call (mediaHooks.beforeCall): the global and the agent's USD budgets, as for model calls.
   * Its cost is known only once made, so a call is refused when the money is already spent. Token quotas count
   * model tokens and do not apply.
   */
  async checkMedia(call: MediaCallCheck): Promise<Refusal | undefined> {
    const now = this.now();
    const global = await this.money('global', this.globalLimits(), now, 0);
    if (global || !call.agentId) return global;
    return this.money(this.agentScope(call.agentId), this.agentLimits(call.agentId), now, 0, call.agentId);
  }

  private agentScope(agentId: string): string {
    return `agent '${this.deps.agents()?.get(agentId)?.name ?? agentId}'`;
  }

  /** A refusal when the scope's daily or monthly spend has reached its limit, or `estimate` more would pass it. */
  private async money(scope: string, limits: Limits, now: number, estimate: number, agentId?: string): Promise<Refusal | undefined> {
    if (limits.daily_limit_usd <= 0 && limits.monthly_limit_usd <= 0) return undefined;
    const windows = [
      { name: 'daily', limit: limits.daily_limit_usd, spent: (await this.deps.store.sums(periodStart('day', now), agentId)).cost_usd },
      { name: 'monthly', limit: limits.monthly_limit_usd, spent: (await this.deps.store.sums(periodStart('month', now), agentId)).cost_usd },
    ];
    for (const w of windows) {
      if (w.limit > 0 && (w.spent >= w.limit || w.spent + estimate > w.limit)) {
        return { status: BUDGET_STATUS, error: `${scope} ${w.name} budget exceeded: $${usd(w.spent)} spent of $${w.limit}` };
      }
    }
    return undefined;
  }

  /** A refusal when the scope's tokens of this hour plus `requested` would pass its hourly quota. */
  private async tokens(scope: string, limit: number, now: number, requested: number, agentId?: string): Promise<Refusal | undefined> {
    if (limit <= 0) return undefined;
    const used = await this.hourlyTokens(now, agentId);
    if (used + requested <= limit) return undefined;
    return {
      status: QUOTA_STATUS,
      error: `${scope} hourly token quota exceeded: ${used} of ${limit} tokens used this hour (about ${requested} more requested); resets at ${new Date(nextHour(now)).toISOString()}`,
    };
  }

  async summary(agentId?: string): Promise<UsageSummary> {
    const now = this.now();
    const today = await this.deps.store.sums(periodStart('day', now), agentId);
    const limit = agentId === undefined ? this.deps.config().hourly_token_limit : (this.deps.agents()?.get(agentId)?.maxLlmTokensPerHour ?? 0);
    return {
      today: { input_tokens: today.input_tokens, output_tokens: today.output_tokens, cost_usd: usd(today.cost_usd), requests: today.requests },
      quota: { hourly_token_limit: limit, hourly_tokens_used: await this.hourlyTokens(now, agentId), hourly_reset_at: new Date(nextHour(now)).toISOString() },
    };
  }

  async totals(period: UsagePeriod): Promise<UsageTotals> {
    const since = periodStart(period, this.now());
    const sums = await this.deps.store.sums(since);
    return {
      period,
      total_input_tokens: sums.input_tokens,
      total_output_tokens: sums.output_tokens,
      total_cost_usd: usd(sums.cost_usd),
      request_count: sums.requests,
      active_agents: await this.deps.store.activeAgents(since),
    };
  }

  /** Usage of the period per purpose of the calls, so background calls (memory extraction) show apart from turns. */
  async byPurpose(period: UsagePeriod): Promise<PurposeRow[]> {
    return (await this.deps.store.byPurpose(periodStart(period, this.now()))).map((p) => ({ ...p, cost_usd: usd(p.cost_usd) }));
  }

  /** Media calls of the period per kind, provider, model and unit: units, cost, and how many went unpriced. */
  async media(period: UsagePeriod): Promise<MediaRow[]> {
    return (await this.deps.store.media(periodStart(period, this.now()))).map((m) => ({ ...m, cost_usd: usd(m.cost_usd) }));
  }

  async byModel(): Promise<ModelRow[]> {
    return (await this.deps.store.byModel()).map((m) => ({ ...m, cost_usd: usd(m.cost_usd) }));
  }

  /** One row per UTC day of the last `days` days (today included), oldest first, zero-filled. */
  async daily(days: number): Promise<DayRow[]> {
    const today = periodStart('day', this.now());
    const since = today - (days - 1) * 86_400_000;
    const found = new Map((await this.deps.store.daily(since)).map((r) => [r.date, r]));
    const out: DayRow[] = [];
    for (let t = since; t <= today; t += 86_400_000) {
      const date = new Date(t).toISOString().slice(0, 10);
      const row = found.get(date);
      out.push({
        date,
        input_tokens: row?.input_tokens ?? 0,
        output_tokens: row?.output_tokens ?? 0,
        cost_usd: usd(row?.cost_usd ?? 0),
        requests: row?.requests ?? 0,
      });
    }
    return out;
  }

  globalLimits(): Limits {
    const config = this.deps.config();
    return this.deps.store.limits(GLOBAL) ?? { daily_limit_usd: config.daily_limit_usd, monthly_limit_usd: config.monthly_limit_usd };
  }

  agentLimits(agentId: string): Limits {
    const config = this.deps.config();
    return this.deps.store.limits(agentId) ?? { daily_limit_usd: config.agent_daily_limit_usd, monthly_limit_usd: config.agent_monthly_limit_usd };
  }

  /** Stores new limits for 'global' or an agent; omitted fields keep their current value. */
  async setLimits(agentId: string | undefined, change: Partial<Limits>): Promise<void> {
    const current = agentId === undefined ? this.globalLimits() : this.agentLimits(agentId);
    await this.deps.store.setLimits(agentId ?? GLOBAL, { ...current, ...change });
  }

  globalBudget(): Promise<BudgetView> {
    return this.budgetView(this.globalLimits());
  }

  async agentBudget(agentId: string, agentName: string, maxTokensPerHour: number): Promise<AgentBudgetView> {
    return {
      agent_id: agentId,
      agent_name: agentName,
      ...(await this.budgetView(this.agentLimits(agentId), agentId)),
      max_llm_tokens_per_hour: maxTokensPerHour,
      hourly_tokens_used: await this.hourlyTokens(this.now(), agentId),
    };
  }

  /** Agents by total spend (most first): every registered agent plus any agent that has usage. */
  async ranking(): Promise<Array<{ agent_id: string; agent_name: string; total_cost_usd: number; today_cost_usd: number }>> {
    const rows = new Map<string, AgentCostRow>((await this.deps.store.agentCosts(periodStart('day', this.now()))).map((r) => [r.agent_id, r]));
    const agents: AgentRecord[] = this.deps.agents()?.list() ?? [];
    for (const a of agents) if (!rows.has(a.id)) rows.set(a.id, { agent_id: a.id, agent_name: a.name, total_cost_usd: 0, today_cost_usd: 0 });
    const names = new Map(agents.map((a) => [a.id, a.name]));
    return [...rows.values()]
      .map((r) => ({
        agent_id: r.agent_id,
        agent_name: names.get(r.agent_id) ?? r.agent_name ?? '',
        total_cost_usd: usd(r.total_cost_usd),
        today_cost_usd: usd(r.today_cost_usd),
      }))
      .sort((a, b) => b.total_cost_usd - a.total_cost_usd || b.today_cost_usd - a.today_cost_usd || a.agent_name.localeCompare(b.agent_name));
  }

  private async budgetView(limits: Limits, agentId?: string): Promise<BudgetView> {
    const now = this.now();
    const today = usd((await this.deps.store.sums(periodStart('day', now), agentId)).cost_usd);
    const month = usd((await this.deps.store.sums(periodStart('month', now), agentId)).cost_usd);
    return { ...limits, today_spent_usd: today, month_spent_usd: month, status: this.status(limits, today, month) };
  }

  private status(limits: Limits, today: number, month: number): BudgetStatus {
    const share = Math.max(
      limits.daily_limit_usd > 0 ? today / limits.daily_limit_usd : 0,
      limits.monthly_limit_usd > 0 ? month / limits.monthly_limit_usd : 0,
    );
    if (share >= 1) return 'exceeded';
    return share >= this.deps.config().warning_threshold ? 'warning' : 'ok';
  }

  private async hourlyTokens(now: number, agentId?: string): Promise<number> {
    const sums = await this.deps.store.sums(periodStart('hour', now), agentId);
    return sums.input_tokens + sums.output_tokens;
  }

  private price(provider: string, model: string, inputTokens: number, outputTokens: number): number {
    return this.deps.catalog()?.cost(provider, model, inputTokens, outputTokens) ?? 0;
  }
}

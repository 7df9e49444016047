/**
 * Contract of the usage module: metering of every upstream LLM call and every media call, budgets
 * and hourly token quotas. Import types and the ref from here.
 */
import { defineEvents, payload, serviceRef } from '@talon/module-sdk';

export const usageEvents = defineEvents('usage', {
  /**
   * A model or media call refused before the provider saw it: a budget (status 402) or an hourly token quota (429).
   * `kind` names a media call's kind (image, speech, music, video, transcription); absent for a model call.
   */
  'budget.exceeded': payload<{ agentId?: string; provider: string; model: string; status: number; error: string; kind?: string }>(),
});

export type UsagePeriod = 'hour' | 'day' | 'week' | 'month';

export interface UsageTotals {
  period: UsagePeriod;
  total_input_tokens: number;
  total_output_tokens: number;
  total_cost_usd: number;
  request_count: number;
  active_agents: number;
}

export interface UsageSummary {
  today: { input_tokens: number; output_tokens: number; cost_usd: number; requests: number };
  /** The agent's max_llm_tokens_per_hour when summarised for an agent, else the global hourly_token_limit (0 = none). */
  quota: { hourly_token_limit: number; hourly_tokens_used: number; hourly_reset_at: string };
}

export type BudgetStatus = 'ok' | 'warning' | 'exceeded';

export interface BudgetView {
  daily_limit_usd: number;
  monthly_limit_usd: number;
  today_spent_usd: number;
  month_spent_usd: number;
  status: BudgetStatus;
}

export interface AgentBudgetView extends BudgetView {
  agent_id: string;
  agent_name: string;
  max_llm_tokens_per_hour: number;
  hourly_tokens_used: number;
}

export interface UsageService {
  /** Today's usage and the hourly quota, of one agent or (without an id) of the whole service. */
  summary(agentId?: string): Promise<UsageSummary>;
  totals(period: UsagePeriod): Promise<UsageTotals>;
  globalBudget(): Promise<BudgetView>;
  agentBudget(agentId: string, agentName: string, maxTokensPerHour: number): Promise<AgentBudgetView>;
}

export const usageService = serviceRef<UsageService>('usage.service');

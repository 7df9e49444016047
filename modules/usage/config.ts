import type { FromSchema } from '@talon/module-sdk';

/**
 * Budgets have a ceiling so that a slip (`1e308`, a value in cents, a pasted token count) is refused with the range
 * instead of silently meaning "unlimited": a million USD a day or month, ten billion tokens an hour.
 */
export const MAX_BUDGET_USD = 1_000_000;
export const MAX_TOKENS_PER_HOUR = 10_000_000_000;

/** A USD budget: 0 (unlimited) up to the ceiling; the range is the message of a value outside it. */
export const usdBudget = { type: 'number', minimum: 0, maximum: MAX_BUDGET_USD, 'x-error': 'a number of USD from 0 (unlimited) to 1000000' } as const;

/** Default budgets; PUT /api/budget and PUT /api/budget/agents/{id} override them (persisted in SQLite). 0 = unlimited. */
export const usageConfigSchema = {
  type: 'object',
  properties: {
    daily_limit_usd: { ...usdBudget, default: 0, description: 'global daily USD budget (0 = unlimited)' },
    monthly_limit_usd: { ...usdBudget, default: 0, description: 'global monthly USD budget (0 = unlimited)' },
    agent_daily_limit_usd: { ...usdBudget, default: 0, description: 'default daily USD budget of each agent (0 = unlimited)' },
    agent_monthly_limit_usd: { ...usdBudget, default: 0, description: 'default monthly USD budget of each agent (0 = unlimited)' },
    hourly_token_limit: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_TOKENS_PER_HOUR,
      'x-error': 'a whole number of tokens from 0 (unlimited) to 10000000000',
      default: 0,
      description: 'tokens per UTC hour for the whole service (0 = unlimited)',
    },
    warning_threshold: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.8, description: 'share of a budget at which its status turns "warning"' },
  },
  additionalProperties: false,
} as const;

export type UsageConfig = FromSchema<typeof usageConfigSchema, { keepDefaultedPropertiesOptional: false }>;

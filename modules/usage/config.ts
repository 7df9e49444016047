import type { FromSchema } from '@talon/module-sdk';

/** Default budgets; PUT /api/budget and PUT /api/budget/agents/{id} override them (persisted in SQLite). 0 = unlimited. */
export const usageConfigSchema = {
  type: 'object',
  properties: {
    daily_limit_usd: { type: 'number', minimum: 0, default: 0, description: 'global daily USD budget (0 = unlimited)' },
    monthly_limit_usd: { type: 'number', minimum: 0, default: 0, description: 'global monthly USD budget (0 = unlimited)' },
    agent_daily_limit_usd: { type: 'number', minimum: 0, default: 0, description: 'default daily USD budget of each agent (0 = unlimited)' },
    agent_monthly_limit_usd: { type: 'number', minimum: 0, default: 0, description: 'default monthly USD budget of each agent (0 = unlimited)' },
    hourly_token_limit: { type: 'integer', minimum: 0, default: 0, description: 'tokens per UTC hour for the whole service (0 = unlimited)' },
    warning_threshold: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.8, description: 'share of a budget at which its status turns "warning"' },
  },
  additionalProperties: false,
} as const;

export type UsageConfig = FromSchema<typeof usageConfigSchema, { keepDefaultedPropertiesOptional: false }>;

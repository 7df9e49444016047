import type { FromSchema } from '@talon/module-sdk';

export const rateConfigKeys = {
  rate_limit_per_second: {
    type: 'number',
    exclusiveMinimum: 0,
    maximum: 1_000_000,
    'x-error': 'cost units per second per client IP: more than 0, at most 1000000',
    default: 10,
    description: 'GCRA rate: cost units per second per client IP (health costs 1, a message 30)',
  },
} as const;
export type RateConfig = FromSchema<
  { type: 'object'; properties: typeof rateConfigKeys; additionalProperties: false },
  { keepDefaultedPropertiesOptional: false }
>;

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

/** `[rate_limit]`, the reference's table (its api_requests_per_minute is an alias of rate_limit_per_second). */
export const rateConfigSchema = {
  type: 'object',
  properties: {
    fleet: {
      type: 'string',
      enum: ['approximate', 'exact'],
      default: 'approximate',
      description:
        'several nodes on one database: "approximate" (each node allows the rate divided by the live nodes, in memory) or "exact" (one budget per client in the database: a statement per request)',
    },
  },
  additionalProperties: false,
} as const;

export type RateConfig = FromSchema<
  { type: 'object'; properties: typeof rateConfigKeys & (typeof rateConfigSchema)['properties']; additionalProperties: false },
  { keepDefaultedPropertiesOptional: false }
>;

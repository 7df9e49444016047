import type { FromSchema } from '@talon/module-sdk';

export const MISFIRE_POLICIES = ['fire_once', 'skip', 'all'] as const;
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];

/** The [scheduler] section of config.toml. */
export const schedulerConfigSchema = {
  type: 'object',
  properties: {
    misfire_policy: {
      type: 'string',
      enum: MISFIRE_POLICIES,
      default: 'fire_once',
      description:
        "slots missed while the service was down: 'fire_once' = one catch-up run, 'skip' = none, 'all' = one run per missed slot (up to max_catch_up); a job may set its own",
    },
    misfire_grace_secs: {
      type: 'integer',
      minimum: 1,
      default: 60,
      description: 'a slot that is due by less than this counts as on time, whatever the misfire policy',
    },
    max_catch_up: { type: 'integer', minimum: 1, maximum: 10000, default: 10, description: "misfire_policy 'all': the most recent missed slots that run" },
    max_consecutive_failures: { type: 'integer', minimum: 1, default: 5, description: 'failures in a row after which a job disables itself (auto_disabled)' },
    failure_backoff_secs: {
      type: 'integer',
      minimum: 0,
      default: 60,
      description: 'after a failure the next run waits at least this long, doubling with each further failure',
    },
    max_backoff_secs: { type: 'integer', minimum: 0, default: 3600, description: 'ceiling of the failure backoff' },
    turn_timeout_secs: {
      type: 'integer',
      minimum: 0,
      default: 300,
      description: 'default limit of a scheduled run (a job may set timeout_secs); 0 = no limit',
    },
    min_interval_secs: { type: 'integer', minimum: 1, default: 10, description: "shortest 'every' interval accepted" },
    tick_ms: {
      type: 'integer',
      minimum: 10,
      maximum: 60000,
      default: 1000,
      description: 'longest sleep between two looks at the job table (the scheduler also wakes exactly when the next job is due)',
    },
    on_agent_killed: {
      type: 'string',
      enum: ['disable', 'delete'],
      default: 'disable',
      description: "what happens to the jobs of a killed agent: 'disable' (kept, reassignable with PUT agent_id) or 'delete'",
    },
  },
  additionalProperties: false,
} as const;

export type SchedulerConfig = FromSchema<typeof schedulerConfigSchema, { keepDefaultedPropertiesOptional: false }>;

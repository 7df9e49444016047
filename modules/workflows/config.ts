import type { FromSchema } from '@talon/module-sdk';

/** The [workflows] section of config.toml. */
export const workflowsConfigSchema = {
  type: 'object',
  properties: {
    step_timeout_secs: {
      type: 'integer',
      minimum: 0,
      default: 120,
      description: 'default per-step timeout (a step may set its own timeout_secs); 0 = no limit',
    },
    run_timeout_secs: { type: 'integer', minimum: 0, default: 0, description: 'default whole-run timeout (total_timeout_secs on a workflow); 0 = no limit' },
    fan_out_concurrency: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 16,
      description: 'steps of one run that run at once: consecutive fan_out steps, or independent steps of a graph (depends_on)',
    },
    retry_backoff_ms: {
      type: 'integer',
      minimum: 0,
      default: 1000,
      description: 'error_mode retry: wait before the 2nd attempt (doubling each time, jittered ±20%; a step may set backoff_ms)',
    },
    max_backoff_ms: { type: 'integer', minimum: 0, default: 60000, description: 'ceiling of the retry wait' },
    max_steps: { type: 'integer', minimum: 1, default: 200, description: 'steps a workflow may have' },
    runs_kept: { type: 'integer', minimum: 1, default: 500, description: 'finished runs kept per workflow (the oldest go first)' },
  },
  additionalProperties: false,
} as const;

export type WorkflowsConfig = FromSchema<typeof workflowsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

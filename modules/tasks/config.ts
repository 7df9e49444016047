import type { FromSchema } from '@talon/module-sdk';

const laneCap = (def: number, what: string) =>
  ({ type: 'integer', minimum: 1, maximum: 1000, default: def, description: `turns run at once for ${what}` }) as const;

/** The [tasks] section of config.toml. */
export const tasksConfigSchema = {
  type: 'object',
  properties: {
    claim_timeout_secs: {
      type: 'integer',
      minimum: 1,
      default: 600,
      description: 'a claimed task not completed within this many seconds goes back to pending (retry_count + 1)',
    },
    max_retries: {
      type: 'integer',
      minimum: 0,
      default: 3,
      description: 'claims that may time out before a task is marked failed; 0 = unlimited',
    },
    sweep_interval_secs: { type: 'integer', minimum: 1, default: 30, description: 'how often timed-out claims are swept (reads sweep too)' },
    lanes: {
      type: 'object',
      properties: {
        schedule: laneCap(4, 'schedules and cron jobs'),
        trigger: laneCap(8, 'trigger fires'),
        workflow: laneCap(32, 'workflow steps, all runs together'),
        task: laneCap(4, 'task-board wake-ups'),
      },
      additionalProperties: laneCap(4, 'another lane'),
      default: {},
      description: 'concurrency cap of each queue lane',
    },
  },
  additionalProperties: false,
} as const;

export type TasksConfig = FromSchema<typeof tasksConfigSchema, { keepDefaultedPropertiesOptional: false }>;

import type { FromSchema } from '@talon/module-sdk';

/** The [triggers] section of config.toml. */
export const triggersConfigSchema = {
  type: 'object',
  properties: {
    cooldown_secs: {
      type: 'integer',
      minimum: 0,
      default: 5,
      description: 'engine default of a trigger’s cooldown_secs (null): seconds before it fires again for the same subject; 0 = none',
    },
    max_chain_depth: {
      type: 'integer',
      minimum: 1,
      default: 5,
      description: 'a trigger fired by the turn of a trigger fired by ... stops at this depth',
    },
    max_fires_per_event: { type: 'integer', minimum: 1, default: 100, description: 'triggers one event may fire (the rest are skipped and logged)' },
    fire_timeout_secs: { type: 'integer', minimum: 0, default: 300, description: 'limit of a fired turn; 0 = no limit' },
    assignee_wake: {
      type: 'boolean',
      default: true,
      description: 'a task posted for an agent that no trigger of its own fires for wakes the agent with a task-board prompt',
    },
    deliveries_kept: { type: 'integer', minimum: 1, default: 200, description: 'deliveries kept per agent (the oldest go first)' },
  },
  additionalProperties: false,
} as const;

export type TriggersConfig = FromSchema<typeof triggersConfigSchema, { keepDefaultedPropertiesOptional: false }>;

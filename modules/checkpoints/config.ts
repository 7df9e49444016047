import type { FromSchema } from '@talon/module-sdk';

export const checkpointsConfigSchema = {
  type: 'object',
  properties: {
    snapshot_timeout_ms: {
      type: 'integer',
      minimum: 1,
      default: 10000,
      description: 'upper bound of one snapshot (queueing included); on timeout the git child is killed and the tool proceeds',
    },
    max_file_bytes: { type: 'integer', minimum: 0, default: 51200, description: 'files above this size are not committed to a shadow repository' },
    max_checkpoints: {
      type: 'integer',
      minimum: 0,
      default: 500,
      description: 'checkpoints kept per working directory, the oldest dropped first (checked every tenth of this many new ones); 0 = no limit',
    },
    max_age_days: {
      type: 'number',
      minimum: 0,
      default: 30,
      description: 'checkpoints older than this are dropped (the newest of a working directory always stays); 0 = no limit',
    },
    retention_sweep_hours: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 500,
      default: 6,
      description: 'how often every shadow repository is checked against the retention policy (also those no snapshot reaches any more)',
    },
  },
  additionalProperties: false,
} as const;

export type CheckpointsConfig = FromSchema<typeof checkpointsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

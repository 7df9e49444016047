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
  },
  additionalProperties: false,
} as const;

export type CheckpointsConfig = FromSchema<typeof checkpointsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

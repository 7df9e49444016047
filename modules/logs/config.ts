import type { FromSchema } from '@talon/module-sdk';

export const logsConfigSchema = {
  type: 'object',
  properties: {
    file: { type: 'boolean', default: true, description: 'write every log line (JSON) to $TALON_HOME/logs/talon-YYYY-MM-DD.log' },
    retention_days: { type: 'integer', minimum: 1, default: 7, description: 'daily log files older than this are deleted at start' },
  },
  additionalProperties: false,
} as const;

export type LogsConfig = FromSchema<typeof logsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

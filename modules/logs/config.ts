import type { FromSchema } from '@talon/module-sdk';

export const logsConfigSchema = {
  type: 'object',
  properties: {
    file: { type: 'boolean', default: true, description: 'write every log line (JSON) to $TALON_HOME/logs/talon-YYYY-MM-DD.log' },
    backlog_lines: {
      type: 'integer',
      minimum: 0,
      maximum: 100000,
      default: 1000,
      description: 'the latest log lines kept in memory for GET /api/logs/stream?backlog= (what the log view opens on); 0 keeps none',
    },
    retention_days: { type: 'integer', minimum: 1, default: 7, description: 'daily log files older than this are deleted at start' },
  },
  additionalProperties: false,
} as const;

export type LogsConfig = FromSchema<typeof logsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

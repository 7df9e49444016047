import type { FromSchema } from '@talon/module-sdk';

export const backupConfigSchema = {
  type: 'object',
  properties: {
    dir: { type: 'string', default: '', description: 'folder of the archives; empty: $TALON_HOME/backups' },
  },
  additionalProperties: false,
} as const;
export type BackupConfig = FromSchema<typeof backupConfigSchema, { keepDefaultedPropertiesOptional: false }>;

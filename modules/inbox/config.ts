import type { FromSchema } from '@talon/module-sdk';

export const inboxConfigSchema = {
  type: 'object',
  properties: { dir: { type: 'string', default: '', description: 'the drop folder; empty: $TALON_HOME/inbox' } },
  additionalProperties: false,
} as const;
export type InboxConfig = FromSchema<typeof inboxConfigSchema, { keepDefaultedPropertiesOptional: false }>;

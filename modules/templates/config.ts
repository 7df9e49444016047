import type { FromSchema } from '@talon/module-sdk';

export const templatesConfigSchema = {
  type: 'object',
  properties: { dir: { type: 'string', default: '', description: 'folder of your own agent templates; empty: $TALON_HOME/templates' } },
  additionalProperties: false,
} as const;
export type TemplatesConfig = FromSchema<typeof templatesConfigSchema, { keepDefaultedPropertiesOptional: false }>;

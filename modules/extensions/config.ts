import type { FromSchema } from '@talon/module-sdk';

export const extensionsConfigSchema = {
  type: 'object',
  properties: {
    install_roots: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'folders an extension template file may be installed from; empty: the service user home folder and $TALON_HOME',
    },
  },
  additionalProperties: false,
} as const;

export type ExtensionsConfig = FromSchema<typeof extensionsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

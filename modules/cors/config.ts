import type { FromSchema } from '@talon/module-sdk';

export const corsConfigKeys = {
  cors_origins: { type: 'array', items: { type: 'string' }, default: [], description: 'extra browser origins allowed to call the API (with an api_key)' },
} as const;
export type CorsConfig = FromSchema<
  { type: 'object'; properties: typeof corsConfigKeys; additionalProperties: false },
  { keepDefaultedPropertiesOptional: false }
>;

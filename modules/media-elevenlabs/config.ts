import type { FromSchema } from '@talon/module-sdk';

const model = (fallback: string, what: string) => ({ type: 'string', minLength: 1, maxLength: 200, default: fallback, description: what }) as const;

/** The [media_elevenlabs] section: the voice and models used when a request names none. */
export const elevenlabsConfigSchema = {
  type: 'object',
  properties: {
    voice: {
      type: 'string',
      pattern: '^[A-Za-z0-9]{20}$',
      default: '21m00Tcm4TlvDq8ikWAM',
      description: 'voice id when a request names none (20 letters and digits; the default is "Rachel")',
    },
    speech_model: model('eleven_multilingual_v2', 'speech model when a request names none (eleven_flash_v2_5, eleven_turbo_v2_5, eleven_v3)'),
    transcription_model: model('scribe_v1', 'transcription model when a request names none'),
  },
  additionalProperties: false,
  default: {},
} as const;

export type ElevenlabsConfig = FromSchema<typeof elevenlabsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

import type { FromSchema } from '@talon/module-sdk';

/** Flite's voices that ship in both the Debian binary and the WebAssembly build. */
export const VOICES = ['rms', 'slt', 'awb', 'kal'] as const;
export type Voice = (typeof VOICES)[number];

/**
 * The [media_local] section: which Flite runs, the voice when a request names none, and where pocketsphinx's en-US
 * model is (Debian's pocketsphinx-en-us puts it in /usr/share/pocketsphinx/model/en-us).
 */
export const localMediaConfigSchema = {
  type: 'object',
  properties: {
    speech_engine: {
      type: 'string',
      enum: ['auto', 'system', 'wasm'],
      default: 'auto',
      description: "auto: the system's flite binary when installed (about 7× faster), else the bundled WebAssembly Flite; system or wasm: only that one",
    },
    voice: {
      type: 'string',
      enum: [...VOICES],
      default: 'rms',
      description: 'voice when a request names none: rms (clearest, and the one pocketsphinx understands best), slt, awb, kal',
    },
    max_parallel: {
      type: 'integer',
      minimum: 1,
      maximum: 64,
      default: 2,
      description: 'local engine runs at once, speech and transcription together (each takes a core and 50–120 MB); more wait in line',
    },
    pocketsphinx_model: {
      type: 'string',
      minLength: 1,
      default: '/usr/share/pocketsphinx/model/en-us',
      description: 'folder of the en-US model: the acoustic model en-us/, en-us.lm.bin and cmudict-en-us.dict',
    },
  },
  additionalProperties: false,
  default: {},
} as const;

export type LocalMediaConfig = FromSchema<typeof localMediaConfigSchema, { keepDefaultedPropertiesOptional: false }>;

import type { FromSchema } from '@talon/module-sdk';

const model = (fallback: string, what: string) => ({ type: 'string', minLength: 1, maxLength: 200, default: fallback, description: what }) as const;

/**
 * The [media_openai] section: the models used when a request names none (an OpenAI-compatible server has its own
 * names, e.g. Groq's whisper-large-v3-turbo), and whether the server at [provider_urls] openai takes no key.
 */
export const openaiMediaConfigSchema = {
  type: 'object',
  properties: {
    image_model: model('gpt-image-1', 'image model when a request names none (dall-e-3 and dall-e-2 also work)'),
    speech_model: model('tts-1', 'speech model when a request names none (tts-1-hd, gpt-4o-mini-tts)'),
    voice: model('alloy', 'voice when a request names none'),
    transcription_model: model('whisper-1', 'transcription model when a request names none (gpt-4o-transcribe; on Groq whisper-large-v3-turbo)'),
    keyless: {
      type: 'boolean',
      default: false,
      description:
        'the OpenAI-compatible server at [provider_urls] openai takes no key (a self-hosted one): openai counts as configured without a key and no Authorization header is sent; ignored for api.openai.com',
    },
  },
  additionalProperties: false,
  default: {},
} as const;

export type OpenaiMediaConfig = FromSchema<typeof openaiMediaConfigSchema, { keepDefaultedPropertiesOptional: false }>;

/**
 * The request shapes of the media routes, one JSON Schema each: it validates the request (and types the handler) and
 * its properties are the agents' media tools' parameters too. Each property says in `x-error` what a client must
 * send, so a 400 names the field and what is allowed.
 */
import { AUDIO_FORMATS, MEDIA_CAPABILITIES } from './formats.ts';

const provider = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description: 'a provider by name (GET /api/media/providers); default: the first configured one with the capability',
  'x-error': 'the name of a media provider (GET /api/media/providers)',
} as const;
const model = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: "the provider's model; default: the provider's",
  'x-error': 'a model name of 1 to 200 characters',
} as const;
const format = {
  enum: AUDIO_FORMATS,
  description: 'the audio format of the result (converted with ffmpeg where the provider makes another)',
  'x-error': 'one of mp3, wav, opus, ogg, flac, aac',
} as const;
const language = {
  type: 'string',
  pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$',
  maxLength: 35,
  description: "a language tag ('en', 'en-US')",
  'x-error': "a language tag such as 'en' or 'en-US'",
} as const;
const side = (what: string) =>
  ({ type: 'integer', minimum: 64, maximum: 4096, description: `${what} in pixels`, 'x-error': 'a whole number of pixels from 64 to 4096' }) as const;

export const imageProperties = {
  prompt: {
    type: 'string',
    minLength: 1,
    maxLength: 4000,
    pattern: '\\S',
    description: 'what the image shows',
    'x-error': 'a description of the image: text of 1 to 4000 characters, not blank',
  },
  provider,
  model,
  width: side('width'),
  height: side('height'),
  count: { type: 'integer', minimum: 1, maximum: 9, default: 1, description: 'how many images', 'x-error': 'a whole number from 1 to 9' },
} as const;

export const imageBody = {
  type: 'object',
  properties: imageProperties,
  required: ['prompt'],
  additionalProperties: false,
  'x-error': "a JSON object with 'prompt' (required), 'provider', 'model', 'width', 'height', 'count'",
} as const;

export const speechProperties = {
  text: {
    type: 'string',
    minLength: 1,
    maxLength: 10000,
    pattern: '\\S',
    description: 'the text to speak',
    'x-error': 'the text to speak: 1 to 10000 characters, not blank',
  },
  voice: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description: "the provider's voice; default: the provider's",
    'x-error': 'a voice name of 1 to 200 characters',
  },
  format,
  speed: { type: 'number', minimum: 0.25, maximum: 4, description: '1 is normal speed', 'x-error': 'a number from 0.25 to 4 (1 is normal)' },
  provider,
  model,
  language,
} as const;

export const speechBody = {
  type: 'object',
  properties: speechProperties,
  required: ['text'],
  additionalProperties: false,
  'x-error': "a JSON object with 'text' (required), 'voice', 'format', 'speed', 'provider', 'model', 'language'",
} as const;

export const musicProperties = {
  prompt: {
    type: 'string',
    minLength: 1,
    maxLength: 2000,
    pattern: '\\S',
    description: 'the style and mood of the music',
    'x-error': 'a description of the music: 1 to 2000 characters, not blank',
  },
  lyrics: {
    type: 'string',
    minLength: 1,
    maxLength: 3500,
    pattern: '\\S',
    description: 'words to sing',
    'x-error': 'lyrics of 1 to 3500 characters, not blank',
  },
  instrumental: { type: 'boolean', description: 'no vocals', 'x-error': 'true or false' },
  format,
  provider,
  model,
} as const;

export const musicBody = {
  type: 'object',
  properties: musicProperties,
  anyOf: [{ required: ['prompt'] }, { required: ['lyrics'] }],
  additionalProperties: false,
  'x-error': "a JSON object with 'prompt' or 'lyrics' (one of them is required), 'instrumental', 'format', 'provider', 'model'",
} as const;

/** POST /api/media/transcribe's query (the multipart form's fields say the same). */
export const transcribeQuery = {
  type: 'object',
  properties: { provider, language, model },
  additionalProperties: false,
} as const;

export const imageResponse = {
  type: 'object',
  properties: {
    images: { type: 'array', items: { type: 'object', properties: { url: { type: 'string' }, file_id: { type: 'string' } }, required: ['url', 'file_id'] } },
    model: { type: 'string' },
    provider: { type: 'string' },
    revised_prompt: { type: ['string', 'null'] },
  },
  required: ['images', 'model', 'provider', 'revised_prompt'],
} as const;

export const audioResponse = {
  type: 'object',
  properties: {
    url: { type: 'string' },
    file_id: { type: 'string' },
    format: { type: 'string' },
    provider: { type: 'string' },
    model: { type: 'string' },
    duration_ms: { type: 'integer', description: 'measured from the file' },
    sample_rate: { type: 'integer', description: 'measured from the file' },
  },
  required: ['url', 'file_id', 'format', 'provider', 'model', 'duration_ms', 'sample_rate'],
} as const;

export const transcriptionResponse = {
  type: 'object',
  properties: { text: { type: 'string' }, provider: { type: 'string' }, model: { type: 'string' }, duration_ms: { type: 'integer' } },
  required: ['text', 'provider', 'model', 'duration_ms'],
} as const;

/** A video task as GET /api/media/video/{task_id} and DELETE answer it (VideoTaskView); the list adds to it. */
export const videoTaskResponse = {
  type: 'object',
  properties: {
    status: { enum: ['processing', 'completed', 'failed', 'cancelled'] },
    task_id: { type: 'string' },
    provider: { type: 'string' },
    progress: { type: 'number' },
    result: {
      type: 'object',
      properties: {
        file_url: { type: 'string' },
        file_id: { type: 'string' },
        width: { type: 'integer' },
        height: { type: 'integer' },
        duration_secs: { type: 'number' },
        provider: { type: 'string' },
        model: { type: 'string' },
      },
    },
    error: { type: 'string' },
  },
  required: ['status', 'task_id', 'provider'],
} as const;

export const providersResponse = {
  type: 'object',
  properties: {
    providers: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          configured: { type: 'boolean' },
          capabilities: { type: 'array', items: { enum: MEDIA_CAPABILITIES } },
          setup: { type: 'string', description: 'what to set or install' },
        },
        required: ['name', 'configured', 'capabilities'],
      },
    },
  },
  required: ['providers'],
} as const;

import type { FromSchema } from '@talon/module-sdk';

const secs = (fallback: number, what: string) =>
  ({ type: 'number', exclusiveMinimum: 0, maximum: 3600, default: fallback, description: `bound of one provider call ${what}, in seconds` }) as const;

/** The [media] section: provider choice, time bounds of each kind of call, video task polling, input caps. */
export const mediaConfigSchema = {
  type: 'object',
  properties: {
    provider_order: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description:
        'providers tried in order when a request names none (the first configured one with the capability); empty = keyed providers in catalogue order, then local',
    },
    image_timeout_secs: secs(120, 'that generates images'),
    speech_timeout_secs: secs(60, 'that synthesises speech'),
    music_timeout_secs: secs(300, 'that generates music'),
    transcribe_timeout_secs: secs(120, 'that transcribes audio'),
    video_timeout_secs: secs(300, 'of a video task (submit, poll, cancel; a poll includes the download of a finished video, up to generated_video_max_bytes)'),
    video_deadline_mins: {
      type: 'integer',
      minimum: 1,
      maximum: 1440,
      default: 30,
      description: 'a video task not completed this long after it was submitted becomes failed (timeout)',
    },
    video_poll_first_secs: { type: 'number', minimum: 0.01, maximum: 600, default: 5, description: 'wait before the first poll of a video task' },
    video_poll_factor: { type: 'number', minimum: 1, maximum: 10, default: 1.5, description: 'each further wait is the previous one times this' },
    video_poll_max_secs: { type: 'number', minimum: 0.01, maximum: 3600, default: 60, description: 'the longest wait between two polls' },
    max_transcribe_bytes: {
      type: 'integer',
      minimum: 1024,
      maximum: 1073741824,
      default: 26214400,
      description: 'largest audio accepted for transcription (413 above it)',
    },
    max_result_bytes: {
      type: 'integer',
      minimum: 1024,
      maximum: 2147483648,
      default: 104857600,
      description: 'largest provider answer or downloaded result read into memory',
    },
  },
  additionalProperties: false,
  default: {},
} as const;

export type MediaConfig = FromSchema<typeof mediaConfigSchema, { keepDefaultedPropertiesOptional: false }>;

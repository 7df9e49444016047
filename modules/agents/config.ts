import type { FromSchema } from '@talon/module-sdk';

/** The [agents] section of config.toml. */
export const agentsConfigSchema = {
  type: 'object',
  properties: {
    max_iterations: {
      type: 'integer',
      minimum: 1,
      default: 50,
      description: 'model calls per turn before the loop gives up ([autonomous] max_iterations in a manifest overrides it)',
    },
    max_history_messages: { type: 'integer', minimum: 0, default: 200, description: 'most recent session messages sent to the model (0 = all)' },
    session_titles: {
      enum: ['first_message', 'model'],
      default: 'first_message',
      description:
        "a session's title when it has no label: the first line of its first message, or a few words the agent's model writes after the first turn (a model call per session, so off by default)",
    },
    upload_max_bytes: { type: 'integer', minimum: 1, default: 10485760, description: 'largest file POST /api/agents/{id}/upload accepts (413 above)' },
    generated_image_max_bytes: {
      type: 'integer',
      minimum: 1,
      default: 10485760,
      description: 'largest generated image the upload store keeps (a bigger one is refused)',
    },
    generated_audio_max_bytes: { type: 'integer', minimum: 1, default: 26214400, description: 'largest generated audio file the upload store keeps' },
    generated_video_max_bytes: { type: 'integer', minimum: 1, default: 104857600, description: 'largest generated video the upload store keeps' },
    generated_retention_days: {
      type: 'integer',
      minimum: 0,
      default: 7,
      description: 'days a generated file (a media result) is kept before the sweeper removes it (0 = keep); set when the file is stored',
    },
    compaction: {
      type: 'object',
      description: 'POST /api/agents/{id}/session/compact',
      properties: { keep_recent: { type: 'integer', minimum: 0, default: 10, description: 'messages kept verbatim by compaction' } },
      additionalProperties: false,
      default: {},
    },
    loop_guard: {
      type: 'object',
      description: 'identical tool calls within one turn',
      properties: {
        warn_threshold: { type: 'integer', minimum: 1, default: 3, description: 'identical tool call that first runs with a warning' },
        block_threshold: { type: 'integer', minimum: 1, default: 5, description: 'identical tool call that is no longer run' },
        max_blocked: { type: 'integer', minimum: 1, default: 30, description: 'blocked calls in one turn that stop the turn' },
      },
      additionalProperties: false,
      default: {},
    },
  },
  additionalProperties: false,
  default: {},
} as const;

export type AgentsConfig = FromSchema<typeof agentsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

import type { FromSchema } from '@talon/module-sdk';

export const terminalConfigSchema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean', default: false, description: 'offer a shell over GET /api/terminal/ws (it runs as the service user)' },
    allow_remote: { type: 'boolean', default: false, description: 'also serve clients that are not on loopback' },
    shell: { type: 'string', default: '', description: 'the shell to run; empty: $SHELL, else /bin/sh' },
    idle_timeout_secs: { type: 'integer', minimum: 1, maximum: 86400, default: 1800, description: 'a session without input or output this long is closed' },
    max_sessions: { type: 'integer', minimum: 1, maximum: 64, default: 4, description: 'sessions open at once' },
    allowed_origins: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'browser origins besides the service itself that may open a terminal',
    },
  },
  additionalProperties: false,
} as const;
export type TerminalConfig = FromSchema<typeof terminalConfigSchema, { keepDefaultedPropertiesOptional: false }>;

import type { FromSchema } from '@talon/module-sdk';

export const handsConfigSchema = {
  type: 'object',
  properties: {
    dir: { type: 'string', default: '', description: 'folder of installed (custom) hands; empty: $TALON_HOME/hands' },
    install_roots: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'folders a hand may be installed from by path; empty: the service user home folder and $TALON_HOME',
    },
    require_requirements: {
      type: 'boolean',
      default: true,
      description: 'refuse (409) to activate a hand whose mandatory requirements are unmet, unless the activation says force',
    },
    deps_timeout_secs: {
      type: 'integer',
      minimum: 1,
      maximum: 3600,
      default: 300,
      description: 'longest run of one install-deps command',
    },
    max_skill_chars: {
      type: 'integer',
      minimum: 0,
      default: 60000,
      description: "a hand's SKILL.md reference text is cut at this many characters in an agent's system prompt",
    },
  },
  additionalProperties: false,
} as const;

export type HandsConfig = FromSchema<typeof handsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

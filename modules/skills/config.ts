import type { FromSchema } from '@talon/module-sdk';

export const skillsConfigSchema = {
  type: 'object',
  properties: {
    dir: { type: 'string', default: '', description: 'folder of installed skills; empty: $TALON_HOME/skills' },
    disabled: { type: 'array', items: { type: 'string' }, default: [], description: 'skills that are not loaded (by name)' },
    watch: { type: 'boolean', default: true, description: 'pick up changes to the skills folder without a restart' },
    install_roots: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'folders a local path install may come from; empty: the service user home folder and $TALON_HOME',
    },
    max_skill_bytes: { type: 'integer', minimum: 1024, default: 10485760, description: 'largest skill folder that installs (bytes, all files)' },
    max_skill_files: { type: 'integer', minimum: 1, default: 1000, description: 'most files a skill folder may hold' },
    max_prompt_chars: { type: 'integer', minimum: 100, default: 16000, description: "a skill's prompt context is cut at this many characters" },
    max_prompt_total_chars: { type: 'integer', minimum: 1000, default: 80000, description: 'all skill context of one agent is cut at this many characters' },
    script_timeout_secs: { type: 'integer', minimum: 1, maximum: 600, default: 60, description: 'longest run of a script tool (a skill may ask for less)' },
    max_output_bytes: { type: 'integer', minimum: 1024, default: 1048576, description: 'a script tool printing more than this fails' },
    python: { type: 'string', default: 'python3', description: 'interpreter of python skills' },
    node: { type: 'string', default: 'node', description: 'interpreter of node skills' },
    shell: { type: 'string', default: 'sh', description: 'interpreter of shell skills' },
    env_passthrough_denied: {
      type: 'array',
      items: { type: 'string' },
      default: [
        '*_KEY',
        '*_TOKEN',
        '*_SECRET',
        '*_PASSWORD',
        '*_API_KEY',
        'AWS_*',
        'GITHUB_*',
        'LD_*',
        'DYLD_*',
        'NODE_OPTIONS',
        'PYTHONPATH',
        'PYTHONSTARTUP',
        'BASH_ENV',
        'ENV',
        'PERL5LIB',
        'RUBYOPT',
      ],
      description: "environment names a skill's env_passthrough never receives ('*' is a wildcard)",
    },
    env_passthrough_allow: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' } },
      default: {},
      description: 'per skill, names it receives despite env_passthrough_denied ({ "my-skill" = ["MY_API_KEY"] })',
    },
  },
  additionalProperties: false,
} as const;

export type SkillsConfig = FromSchema<typeof skillsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

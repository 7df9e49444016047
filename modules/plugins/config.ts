import type { FromSchema } from '@talon/module-sdk';

export const pluginsConfigSchema = {
  type: 'object',
  properties: {
    dir: { type: 'string', default: '', description: 'folder of installed plugins; empty: $TALON_HOME/plugins' },
    hook_timeout_secs: {
      type: 'integer',
      minimum: 1,
      maximum: 30,
      default: 30,
      description: "wall-clock limit of one hook call (the spec's 30 s); a plugin's [hooks] hook_timeout_secs may only lower it",
    },
    on_hook_failure: {
      type: 'string',
      enum: ['warn', 'skip', 'abort'],
      default: 'warn',
      description: 'what a failed hook does unless the plugin says: warn (default engine, a warning), skip (default engine, quietly), abort (the turn fails)',
    },
    max_output_bytes: { type: 'integer', minimum: 1024, default: 1048576, description: 'a hook printing more than this fails' },
    isolation: {
      type: 'string',
      enum: ['auto', 'off'],
      default: 'auto',
      description: 'auto: hooks without allow_network run in their own network (and process) namespace where the kernel allows it; off: never',
    },
    persistent_idle_secs: {
      type: 'integer',
      minimum: 5,
      default: 300,
      description: 'a persistent hook process (or a spare of a prespawn plugin) unused this long is stopped',
    },
    max_spare_processes: {
      type: 'integer',
      minimum: 0,
      default: 16,
      description: 'most spare one-shot processes kept ready for plugins that say prespawn = true (the oldest go first)',
    },
    deps_timeout_secs: { type: 'integer', minimum: 1, maximum: 3600, default: 300, description: 'longest run of install-deps' },
    install_roots: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'folders a plugin may be installed from by path; empty: the service user home folder and $TALON_HOME',
    },
    max_plugin_bytes: { type: 'integer', minimum: 1024, default: 52428800, description: 'largest plugin folder that installs (all files)' },
    max_plugin_files: { type: 'integer', minimum: 1, default: 2000, description: 'most files a plugin folder may hold' },
    max_context_chars: {
      type: 'integer',
      minimum: 100,
      default: 8000,
      description: 'context that plugins add to one system prompt is cut at this many characters',
    },
    compact_after_messages: {
      type: 'integer',
      minimum: 0,
      default: 40,
      description: 'after a turn, the compact hook runs when the session holds more messages than this (0: never)',
    },
    launchers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      default: {},
      description: 'launcher program per runtime, e.g. { python = "/usr/bin/python3.12" }',
    },
  },
  additionalProperties: false,
} as const;

export type PluginsConfig = FromSchema<typeof pluginsConfigSchema, { keepDefaultedPropertiesOptional: false }>;

export const contextEngineSchema = {
  type: 'object',
  description: 'the context engine of agents: the default one, extended by the hooks of these plugins (none: the default alone)',
  properties: {
    plugin: { type: 'string', default: '', description: 'one plugin for every agent' },
    plugin_stack: { type: 'array', items: { type: 'string' }, default: [], description: 'several plugins, run in this order (after plugin)' },
  },
  additionalProperties: false,
  default: {},
} as const;

export type ContextEngineConfig = FromSchema<typeof contextEngineSchema, { keepDefaultedPropertiesOptional: false }>;

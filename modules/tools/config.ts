/**
 * The [tools] section of config.toml ([tools.exec_policy], [tools.web],
 * [tools.invoke]) and the reference's top-level [tool_invoke] table, which
 * this module claims (module.toml config_keys); see invoke-policy.ts.
 */
import type { FromSchema } from '@talon/module-sdk';

export const DEFAULT_SAFE_BINS = [
  'sleep',
  'true',
  'false',
  'cat',
  'sort',
  'uniq',
  'cut',
  'tr',
  'head',
  'tail',
  'wc',
  'date',
  'echo',
  'printf',
  'basename',
  'dirname',
  'pwd',
  'env',
];

export const toolsConfigSchema = {
  type: 'object',
  properties: {
    exec_policy: {
      type: 'object',
      properties: {
        mode: {
          type: 'string',
          // The reference's aliases are accepted and normalised by execMode().
          enum: ['deny', 'none', 'disabled', 'allowlist', 'restricted', 'full', 'allow', 'all', 'unrestricted'],
          default: 'allowlist',
          description: 'deny: no shell; allowlist: only safe_bins and allowlist globs; full: any command',
        },
        allowlist: {
          type: 'array',
          items: { type: 'string' },
          default: [],
          description: 'command globs allowed in allowlist mode (matched against the program and the whole command)',
        },
        safe_bins: { type: 'array', items: { type: 'string' }, default: DEFAULT_SAFE_BINS, description: 'programs always allowed in allowlist mode' },
        timeout_secs: { type: 'integer', minimum: 1, default: 30, description: 'default shell_exec timeout' },
        max_timeout_secs: { type: 'integer', minimum: 1, default: 600, description: 'cap on the timeout_seconds argument' },
        max_output_bytes: { type: 'integer', minimum: 1024, default: 102400, description: 'cap on each of stdout and stderr' },
        env_passthrough: {
          type: 'array',
          items: { type: 'string' },
          default: ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM'],
          description: 'environment variables copied into the cleared shell environment (HOME is always the workspace)',
        },
      },
      additionalProperties: false,
      default: {},
    },
    web: {
      type: 'object',
      properties: {
        allow_hosts: { type: 'array', items: { type: 'string' }, default: [], description: 'host globs, IPs or CIDRs exempt from the SSRF filter' },
        allow_cidrs: { type: 'array', items: { type: 'string' }, default: [], description: 'address ranges exempt from the SSRF filter' },
        max_chars: { type: 'integer', minimum: 1, default: 50000 },
        max_bytes: { type: 'integer', minimum: 1024, default: 10485760, description: 'response bodies are read up to this many bytes' },
        timeout_secs: { type: 'integer', minimum: 1, default: 30 },
        max_redirects: { type: 'integer', minimum: 0, default: 5 },
      },
      additionalProperties: false,
      default: {},
    },
    invoke: {
      type: 'object',
      properties: {
        enabled: { type: 'boolean', description: 'defaults to true when allowlist is non-empty' },
        allowlist: { type: 'array', items: { type: 'string' }, default: [], description: 'globs of tools POST /api/tools/{name}/invoke may run' },
      },
      additionalProperties: false,
      default: {},
    },
  },
  additionalProperties: false,
} as const;

/** The reference system's spelling of [tools.invoke], a top-level table. */
export const toolInvokeSchema = {
  type: 'object',
  description: "the reference system's spelling of [tools.invoke] (both are read: either enables, the allowlists are joined)",
  properties: {
    enabled: { type: 'boolean', default: false, description: 'enables POST /api/tools/{name}/invoke' },
    allowlist: { type: 'array', items: { type: 'string' }, default: [], description: 'globs of tools POST /api/tools/{name}/invoke may run' },
  },
  additionalProperties: false,
  default: {},
} as const;

type Options = { keepDefaultedPropertiesOptional: false };

/** ctx.config: the section plus the claimed top-level key. */
export type ToolsConfig = FromSchema<typeof toolsConfigSchema, Options> & { tool_invoke: FromSchema<typeof toolInvokeSchema, Options> };
export type ExecPolicyConfig = ToolsConfig['exec_policy'];
export type WebConfig = ToolsConfig['web'];

export type ExecMode = 'deny' | 'allowlist' | 'full';

export function execMode(mode: ExecPolicyConfig['mode']): ExecMode {
  switch (mode) {
    case 'deny':
    case 'none':
    case 'disabled':
      return 'deny';
    case 'full':
    case 'allow':
    case 'all':
    case 'unrestricted':
      return 'full';
    default:
      return 'allowlist';
  }
}

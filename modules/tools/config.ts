/**
 * The [tools] section of config.toml ([tools.exec_policy], [tools.web],
 * [tools.invoke]) and the reference's top-level [tool_invoke] table, which
 * this module claims (module.toml config_keys); see invoke-policy.ts. The
 * reference's top-level [exec_policy] is read too (execPolicyAlias).
 */
import type { ConfigAlias, FromSchema } from '@talon/module-sdk';

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

export const DEFAULT_ENV_PASSTHROUGH = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM'];

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
          default: DEFAULT_ENV_PASSTHROUGH,
          description: 'environment variables copied into the cleared shell environment (HOME is always the workspace)',
        },
        no_output_timeout_secs: { type: 'integer', minimum: 0, default: 0, description: 'kill a command that prints nothing for this long; 0 = no such limit' },
        isolation: {
          type: 'string',
          enum: ['auto', 'off'],
          default: 'auto',
          description:
            'auto: run shells in their own PID namespace (and without network for agents whose capabilities.network is empty) where Linux allows it; off: process group and /proc walk only',
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

const isTable = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * The reference system's top-level [exec_policy] table, merged into [tools.exec_policy] before validation (where both
 * set a key, [tools.exec_policy] wins). Its `allowed_commands` is our `allowlist`; its `allowed_env_vars` are added to
 * the default `env_passthrough`. Its keys we do not have (safe_bins_skip_approval...) are warned about as unknown.
 */
export const execPolicyAlias: ConfigAlias = {
  from: 'exec_policy',
  to: 'tools.exec_policy',
  convert(value) {
    if (!isTable(value)) return value;
    const { allowed_commands, allowed_env_vars, ...rest } = value;
    const out: Record<string, unknown> = { ...rest };
    if (Array.isArray(allowed_commands)) out.allowlist = [...(Array.isArray(rest.allowlist) ? rest.allowlist : []), ...allowed_commands];
    if (Array.isArray(allowed_env_vars))
      out.env_passthrough = [...(Array.isArray(rest.env_passthrough) ? rest.env_passthrough : DEFAULT_ENV_PASSTHROUGH), ...allowed_env_vars];
    return out;
  },
};

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

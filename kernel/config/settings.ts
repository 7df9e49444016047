import type { FromSchema } from 'json-schema-to-ts';
import type { KernelSettings } from '@talon/module-sdk';
import type { Same } from '../same-type.ts';

/**
 * The kernel's own part of config.toml: where to listen, logging, which modules run. Every other
 * key belongs to the module that claims it (module.toml `config_keys` / `config_section`).
 */
export const kernelSettingsSchema = {
  type: 'object',
  properties: {
    api_listen: {
      type: 'string',
      pattern: '^(\\[[0-9a-fA-F:]+\\]|[^:\\s]+):[0-9]{1,5}$',
      'x-error': 'must be host:port, e.g. "127.0.0.1:4545", "0.0.0.0:8080" or "[::1]:4545" (a port up to 65535)',
      default: '127.0.0.1:4545',
      description: 'host:port the HTTP API listens on',
    },
    log_level: {
      type: 'string',
      enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
      description: 'log level',
    },
    max_request_body_bytes: {
      type: 'integer',
      minimum: 1024,
      default: 8388608,
      description: 'request bodies above this answer 413',
    },
    trusted_proxies: {
      type: 'array',
      items: {
        type: 'string',
        pattern: '^(loopback|linklocal|uniquelocal|[0-9a-fA-F:.]+(/[0-9]{1,3})?)$',
        'x-error':
          'each must be the IP address or CIDR range of a proxy in front, e.g. "10.0.0.5", "10.0.0.0/24", "loopback"',
      },
      default: [],
      description:
        'load balancers or proxies in front (addresses, CIDR ranges, or "loopback"): X-Forwarded-For from them ' +
        'names the client (rate limits, logs); empty: the peer is the client',
    },
    module_paths: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'folders with third-party modules (a folder with module.toml, or a folder of such folders)',
    },
    modules: {
      type: 'object',
      description: 'which modules run',
      properties: {
        disabled: {
          type: 'array',
          items: { type: 'string' },
          default: [],
          description: 'module names to leave out (a change applies at once, with the modules that depend on them)',
        },
        enabled: {
          type: 'array',
          items: { type: 'string' },
          default: [],
          description: 'modules whose module.toml says enabled = false, to run anyway',
        },
        allow_disable_critical: {
          type: 'array',
          items: { type: 'string' },
          default: [],
          description: 'security modules you really mean to disable although their protection is configured',
        },
      },
      additionalProperties: false,
      default: {},
    },
    database: {
      type: 'object',
      description: 'the database: SQLite in the home unless url names a PostgreSQL server (docs/fleet.md)',
      properties: {
        url: {
          type: 'string',
          pattern: '^(postgres|postgresql)://[^\\s]+$',
          'x-error':
            'must be a PostgreSQL URL, e.g. "postgres://talon@db.internal:5432/talon" (TALON_DATABASE_URL wins)',
          description: 'postgres://user@host:port/database: every module on PostgreSQL 15 or later; absent: SQLite',
        },
        statement_timeout_ms: {
          type: 'integer',
          minimum: 100,
          default: 30000,
          description: 'PostgreSQL: a statement (or an idle transaction) running longer is cancelled',
        },
        pool_size: {
          type: 'integer',
          minimum: 1,
          maximum: 1000,
          default: 10,
          description: 'PostgreSQL: connections each process keeps',
        },
      },
      additionalProperties: false,
      default: {},
    },
    startup: {
      type: 'object',
      description: 'start-up policy',
      properties: {
        on_boot_failure: {
          type: 'string',
          enum: ['continue', 'abort'],
          default: 'continue',
          description: 'when a module fails to start: run without it, or stop (security modules always stop start-up)',
        },
      },
      additionalProperties: false,
      default: {},
    },
  },
  additionalProperties: false,
} as const;

// A key added, removed or retyped here must be so in the SDK's KernelSettings too, which modules read settings by.
true satisfies Same<
  FromSchema<typeof kernelSettingsSchema, { keepDefaultedPropertiesOptional: false }>,
  KernelSettings
>;

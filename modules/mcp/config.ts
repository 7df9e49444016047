/**
 * The [mcp] section, and the reference system's top-level keys this module
 * claims: [[mcp_servers]] (servers defined in config.toml) and [mcp_server]
 * (the MCP server's public_tools allowlist).
 */
import type { FromSchema } from '@talon/module-sdk';

export const mcpConfigSchema = {
  type: 'object',
  properties: {
    catalog_dirs: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: 'folders of extra MCP catalogue templates (<id>.toml, the registry format); they override built-in ids',
    },
    catalog_urls: {
      type: 'array',
      items: { type: 'string', pattern: '^https?://' },
      default: [],
      description: 'URLs of extra templates: one template in TOML, or a JSON array of templates; read at start and on POST /api/mcp/reload',
    },
    timeout_secs: { type: 'integer', minimum: 1, maximum: 3600, default: 60, description: 'default time limit of one MCP tool call' },
    connect_timeout_secs: { type: 'integer', minimum: 1, maximum: 600, default: 30, description: 'time limit of connecting and listing tools' },
    max_result_chars: {
      type: 'integer',
      minimum: 1000,
      default: 50000,
      description: 'MCP tool results longer than this are cut (the same cap as web_fetch)',
    },
    reconnect_base_ms: { type: 'integer', minimum: 10, default: 1000, description: 'first reconnect delay after a server failed; doubles per failure' },
    reconnect_max_secs: { type: 'integer', minimum: 1, default: 300, description: 'longest delay between reconnect attempts' },
    agent_header: {
      type: 'string',
      pattern: '^[A-Za-z0-9-]+$',
      default: 'X-Talon-Agent-Id',
      description: 'request header on /mcp and /api/mcp that scopes tools/list and tools/call to one agent (its id or name)',
    },
  },
  additionalProperties: false,
} as const;

const serverEntrySchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 64 },
    template_id: { type: 'string' },
    transport: {
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['stdio', 'sse', 'http', 'streamable_http', 'streamable-http'] },
        command: { type: 'string', minLength: 1 },
        args: { type: 'array', items: { type: 'string' } },
        url: { type: 'string' },
      },
      required: ['type'],
      additionalProperties: false,
    },
    env: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: "'NAME=value', or 'NAME' to pass the service's own value of NAME",
    },
    headers: { type: 'array', items: { type: 'string' }, default: [], description: "'Name: value' headers for sse and http servers" },
    timeout_secs: { type: 'integer', minimum: 1, maximum: 3600 },
  },
  required: ['name', 'transport'],
  additionalProperties: false,
} as const;

export const mcpServersSchema = {
  type: 'array',
  description: 'MCP servers defined in config.toml (read-only through the API; POST /api/mcp/servers adds more)',
  items: serverEntrySchema,
  default: [],
} as const;

export const mcpServerSchema = {
  type: 'object',
  description: 'the MCP server this service offers at POST /mcp and /api/mcp',
  properties: {
    public_tools: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: 'tools that tools/call on the unauthenticated /mcp may run without the bearer when api_key is set',
    },
  },
  additionalProperties: false,
  default: {},
} as const;

type Options = { keepDefaultedPropertiesOptional: false };
export type McpServerEntry = FromSchema<typeof serverEntrySchema, Options>;
export type McpConfig = FromSchema<typeof mcpConfigSchema, Options> & {
  mcp_servers: McpServerEntry[];
  mcp_server: FromSchema<typeof mcpServerSchema, Options>;
};

import type { FromSchema } from '@talon/module-sdk';

const action = { type: 'string', enum: ['block', 'warn', 'log', 'off'] } as const;

export const taintConfigSchema = {
  type: 'object',
  properties: {
    sinks: {
      type: 'object',
      properties: {
        shell_exec: { ...action, default: 'block', description: 'a command with injection shapes in a turn that read untrusted content' },
        web_fetch: { ...action, default: 'block', description: 'secrets or personal data sent to a host the user did not name' },
        agent_send: { ...action, default: 'block', description: 'secrets passed to another agent' },
        mcp: { ...action, default: 'block', description: 'secrets or personal data in the arguments of an MCP tool (mcp_*)' },
        file_write: { ...action, default: 'warn', description: "the service's own secrets written to a file" },
      },
      additionalProperties: false,
      default: {},
      description: 'what each sink does on a violation: block (the call does not run), warn (it runs; the model is told), log, off',
    },
    untrusted_tools: {
      type: 'array',
      items: { type: 'string' },
      default: ['web_fetch', 'web_search', 'mcp_*', 'browser_*', 'agent_send'],
      description: "tools whose results are untrusted input ('*' ends a prefix)",
    },
    untrusted_origins: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description:
        "further turn origins whose message is untrusted input; every origin but the local user's (http, http-stream, ws, v1) already is, so this only distrusts those too ('*' ends a prefix)",
    },
    trusted_hosts: { type: 'array', items: { type: 'string' }, default: [], description: 'hosts web_fetch may send anything to (never "new")' },
  },
  additionalProperties: false,
} as const;

export type TaintConfig = FromSchema<typeof taintConfigSchema, { keepDefaultedPropertiesOptional: false }>;
export type SinkAction = 'block' | 'warn' | 'log' | 'off';
export const SINKS = ['shell_exec', 'web_fetch', 'agent_send', 'mcp', 'file_write'] as const;

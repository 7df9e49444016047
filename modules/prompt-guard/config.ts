import type { FromSchema } from '@talon/module-sdk';

export const guardConfigSchema = {
  type: 'object',
  properties: {
    rules_file: {
      type: 'string',
      default: '',
      description:
        'a rules file (JSON, the format of modules/prompt-guard/bundled/injection-rules.json) used instead of the bundled one; empty: the bundled rules',
    },
    scan_tool_results: { type: 'boolean', default: true, description: 'scan what untrusted tools return and mark injection-like content for the model' },
    untrusted_tools: {
      type: 'array',
      items: { type: 'string' },
      default: ['web_fetch', 'web_search', 'mcp_*', 'browser_*', 'agent_send'],
      description: 'tools whose results are untrusted content ("*" ends a prefix)',
    },
    scan_messages: {
      type: 'boolean',
      default: true,
      description: 'scan each user message (channel, webhook, agent-to-agent and API turns) and tell the model when it looks like an injection',
    },
  },
  additionalProperties: false,
} as const;

export type GuardConfig = FromSchema<typeof guardConfigSchema, { keepDefaultedPropertiesOptional: false }>;

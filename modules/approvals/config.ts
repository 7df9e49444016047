import type { FromSchema } from '@talon/module-sdk';

const globs = (description: string, defaults: readonly string[]) =>
  ({ type: 'array', items: { type: 'string', minLength: 1 }, default: defaults, description }) as const;

export const approvalConfigSchema = {
  type: 'object',
  properties: {
    require_approval: globs(
      'tool names (globs) whose calls wait for a human; empty = none (recommended: ["shell_exec", "file_write", "file_delete", "apply_patch", "agent_spawn", "agent_kill"])',
      [],
    ),
    timeout_secs: { type: 'integer', minimum: 1, maximum: 86400, default: 60, description: 'how long a request waits for a decision' },
    timeout_fallback: {
      type: 'string',
      enum: ['deny', 'skip', 'escalate'],
      default: 'deny',
      description: 'when a request times out: deny it, skip the call, or escalate (notify again and wait escalate_extra_secs more)',
    },
    escalate_extra_secs: { type: 'integer', minimum: 1, maximum: 86400, default: 120, description: 'extra wait per escalation' },
    max_escalations: { type: 'integer', minimum: 1, maximum: 10, default: 3, description: 'escalations before an escalated request is denied' },
    max_pending_per_agent: { type: 'integer', minimum: 1, maximum: 100000, default: 5, description: 'pending requests one agent may have; more are refused' },
    second_factor: {
      type: 'string',
      enum: ['none', 'totp'],
      default: 'none',
      description: 'totp: approving needs a valid code from the enrolled authenticator',
    },
    totp_issuer: { type: 'string', minLength: 1, maxLength: 64, default: 'Talon', description: 'issuer shown by authenticator apps' },
    notify_devices: {
      type: 'boolean',
      default: true,
      description: 'push each new request to the paired devices (when [pairing] has a push provider)',
    },
    resume_agent: {
      type: 'boolean',
      default: true,
      description: 'after a decision on a held tool call, run a turn of the agent with the outcome (the agent continues); false: only record it',
    },
    risk_levels: {
      type: 'object',
      description: 'tool names (globs) per risk level; other tools are low',
      properties: {
        critical: globs('critical tools', ['shell_exec', 'agent_spawn', 'agent_kill', 'config_set']),
        high: globs('high-risk tools', ['file_write', 'file_delete', 'apply_patch', 'mcp_*']),
        medium: globs('medium-risk tools', ['web_fetch', 'browser_*']),
      },
      additionalProperties: false,
      default: {},
    },
  },
  additionalProperties: false,
} as const;

export type ApprovalConfig = FromSchema<typeof approvalConfigSchema, { keepDefaultedPropertiesOptional: false }>;

/** Request schemas of the approvals routes. */
import { pageQueryProperties } from '@talon/module-sdk';

export const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

export const listQuery = {
  type: 'object',
  properties: {
    ...pageQueryProperties,
    agent_id: { type: 'string', description: "only this agent's requests" },
    status: { type: 'string', enum: ['pending', 'approved', 'rejected', 'expired'], description: 'only requests in this state' },
  },
} as const;

export const auditQuery = { type: 'object', properties: { ...pageQueryProperties, agent_id: { type: 'string' } } } as const;

export const createBody = {
  type: 'object',
  properties: {
    agent_id: { type: 'string', description: 'the agent that asks' },
    action: { type: 'string', minLength: 1, maxLength: 200, description: 'what it wants to do (a tool name for tool calls)' },
    description: { type: 'string', maxLength: 4096, default: '' },
    payload: { type: 'object', default: {}, description: 'details a human needs to decide' },
  },
  required: ['agent_id', 'action'],
  additionalProperties: false,
} as const;

const totpCode = { type: 'string', minLength: 1, maxLength: 64 } as const;

export const approveBody = {
  type: 'object',
  properties: { totp_code: { ...totpCode, description: 'required when [approval] second_factor = "totp"' } },
  additionalProperties: false,
} as const;

export const rejectBody = { type: 'object', properties: { reason: { type: 'string', maxLength: 4096 } }, additionalProperties: false } as const;

export const batchBody = {
  type: 'object',
  properties: {
    ids: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 100 },
    decision: { type: 'string', enum: ['approve', 'reject'] },
    totp_code: totpCode,
    reason: { type: 'string', maxLength: 4096 },
  },
  required: ['ids', 'decision'],
  additionalProperties: false,
} as const;

export const codeBody = {
  type: 'object',
  properties: { code: { ...totpCode, description: 'a 6-digit TOTP code (revoke also takes a recovery code)' } },
  required: ['code'],
  additionalProperties: false,
} as const;

export const setupBody = {
  type: 'object',
  properties: { current_code: { ...totpCode, description: 'replacing a confirmed enrollment needs a current TOTP or recovery code' } },
  additionalProperties: false,
} as const;

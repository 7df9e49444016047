/** Schemas and lookups shared by the agents routes. */
import { requireUuid } from '@talon/module-sdk';
import type { AgentRecord } from '@talon/agents';
import type { AgentServices } from '../services/context.ts';

export const idParams = {
  type: 'object',
  properties: { id: { type: 'string' } },
  required: ['id'],
} as const;

export const sessionParams = {
  type: 'object',
  properties: { id: { type: 'string' }, session_id: { type: 'string' } },
  required: ['id', 'session_id'],
} as const;

export const stringList = { type: 'array', items: { type: 'string' } } as const;

/** The agent named by a path id: 400 when it is no UUID, 404 when unknown. */
export function agentParam(s: AgentServices, id: string): AgentRecord {
  return s.registry.require(requireUuid(id, 'agent id'));
}

/**
 * What the event bus tells the trail. Every event becomes an entry; the types listed here get their
 * documented event_type and details, any other type its name in snake_case with its data as details
 * (so a module's new events are audited without a change here).
 */
import type { CustomEvent, EventOf, TalonEvent } from '@talon/module-sdk';
import type { agentEvents } from '@talon/agents';
import type { approvalEvents } from '@talon/approvals';
import type { usageEvents } from '@talon/usage';
import type { AuditRecord } from '@talon/audit';

/** Bus events that say nothing an audit reader needs (the turn's completion is recorded instead). */
const SKIPPED = new Set(['message.received']);

export const snake = (type: string): string =>
  type
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')
    .toLowerCase();

/** Fields that carry what someone wrote (a message, a reply, a task's result): the trail keeps only their length. */
const TEXT_FIELDS = new Set(['text', 'message', 'content', 'response', 'result', 'prompt']);

/** Keeps details small and free of secrets and message text: strings are cut, text fields become their length. */
function trimmed(data: unknown): Record<string, unknown> {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return { value: data };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    if (TEXT_FIELDS.has(k) && typeof v === 'string') out[`${k}_chars`] = v.length;
    else out[k] = typeof v === 'string' && v.length > 300 ? `${v.slice(0, 300)}…` : v;
  }
  return out;
}

/**
 * The events the trail records with their own event_type. An event's name says whose it is (the loader lets only its
 * owner publish it), so the name gives the payload's type.
 */
type Documented = EventOf<typeof agentEvents> | EventOf<typeof usageEvents> | EventOf<typeof approvalEvents> | TalonEvent<'custom', CustomEvent>;

export function fromEvent(bus: TalonEvent): AuditRecord | undefined {
  if (SKIPPED.has(bus.type)) return undefined;
  const event = bus as Documented;
  switch (event.type) {
    case 'agent.spawned': {
      const d = event.data;
      return { event_type: 'agent_spawned', agent_id: d.agentId, details: { name: d.name, parent_id: d.parentId ?? null } };
    }
    case 'agent.terminated':
      return { event_type: 'agent_killed', agent_id: event.data.agentId, details: { name: event.data.name } };
    case 'agent.crashed':
      return { event_type: 'agent_crashed', agent_id: event.data.agentId, details: { name: event.data.name, error: event.data.error }, outcome: 'error' };
    case 'turn.completed': {
      const d = event.data;
      return {
        event_type: 'agent_message',
        agent_id: d.agentId,
        details: {
          session_id: d.sessionId,
          turn_id: d.turnId,
          tokens_in: d.inputTokens,
          tokens_out: d.outputTokens,
          cost_usd: d.costUsd,
          origin: d.origin ?? null,
        },
      };
    }
    case 'tool.invoked': {
      const d = event.data;
      return {
        event_type: 'tool_invoked',
        agent_id: d.agentId ?? null,
        details: { tool: d.tool, session_id: d.sessionId ?? null, turn_id: d.direct ? null : (d.turnId ?? null), ms: d.ms, direct: d.direct === true },
        outcome: d.isError ? 'error' : 'ok',
      };
    }
    case 'budget.exceeded': {
      const d = event.data;
      // kind: 'llm' for model calls, else the media kind (image, speech, ...).
      const details = { kind: d.kind ?? 'llm', provider: d.provider, model: d.model, status: d.status, error: d.error };
      return { event_type: 'budget_exceeded', agent_id: d.agentId ?? null, details, outcome: 'denied' };
    }
    case 'approval.requested':
      return { event_type: 'approval_requested', agent_id: event.data.agentId ?? null, details: trimmed(event.data), outcome: 'pending' };
    case 'approval.resolved':
      return { event_type: 'approval_decided', details: trimmed(event.data), outcome: event.data.status };
    case 'custom':
      return { event_type: snake(event.data.type), details: trimmed(event.data.data) };
    default: {
      const data = trimmed(bus.data);
      const agent = typeof data.agentId === 'string' ? data.agentId : null;
      return { event_type: snake(bus.type), agent_id: agent, details: { ...data, source: bus.source } };
    }
  }
}

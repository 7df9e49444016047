/**
 * Which service events a webhook can subscribe to, by name (snake_case, as the spec's event_type), and the
 * bus event each one stands for. Dotted spellings (agent.spawned) are accepted as input.
 */
import type { EventOf, TalonEvent } from '@talon/module-sdk';
import type { workflowEvents } from '@talon/workflows';

export const EVENT_NAMES = [
  'agent_spawned',
  'agent_terminated',
  'agent_crashed',
  'message_received',
  'message_completed',
  'tool_invoked',
  'memory_updated',
  'task_posted',
  'task_claimed',
  'task_completed',
  'workflow_completed',
  'workflow_failed',
  'schedule_fired',
  'approval_requested',
  'approval_resolved',
  'custom',
  'all',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

const ALIASES: Record<string, EventName> = {
  agent_error: 'agent_crashed',
  agent_stopped: 'agent_terminated',
  cron_fired: 'schedule_fired',
  approval_decided: 'approval_resolved',
};

/** The canonical name, or undefined for a name no event has. */
export function eventName(input: string): EventName | undefined {
  const snake = input.trim().toLowerCase().replace(/\./g, '_');
  if ((EVENT_NAMES as readonly string[]).includes(snake)) return snake as EventName;
  return ALIASES[snake];
}

/** The webhook event name of a bus event. */
export function nameOf(event: TalonEvent): EventName {
  switch (event.type) {
    case 'turn.completed':
      return 'message_completed';
    case 'workflow.run_finished': {
      // Only the workflows module publishes this name, so the payload is its run's.
      const { status } = (event as EventOf<typeof workflowEvents, 'workflow.run_finished'>).data;
      return /^(completed|succeeded|success)$/i.test(status) ? 'workflow_completed' : 'workflow_failed';
    }
    default:
      return event.type.replace(/\./g, '_') as EventName;
  }
}

export const subscribed = (events: readonly string[], name: EventName) => events.includes('all') || events.includes(name);

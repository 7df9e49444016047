/**
 * The events whose payloads triggers read. An event's name says whose it is (the loader lets only its owner publish
 * it), so a '*' event with one of these names carries that payload; any other is read as data.
 */
import type { CustomEvent, EventOf, TalonEvent } from '@talon/module-sdk';
import type { agentEvents } from '@talon/agents';
import type { approvalEvents } from '@talon/approvals';
import type { memoryEvents } from '@talon/memory';
import type { taskEvents } from '@talon/tasks';
import type { workflowEvents } from '@talon/workflows';

export type KnownEvent =
  | EventOf<typeof agentEvents>
  | EventOf<typeof approvalEvents>
  | EventOf<typeof memoryEvents>
  | EventOf<typeof taskEvents>
  | EventOf<typeof workflowEvents>
  | TalonEvent<'custom', CustomEvent>;

/** A bus event, typed by its name. */
export const known = (event: TalonEvent): KnownEvent => event as KnownEvent;

/** The spec's task shape ({task_id, status, result {role, parts}}) of an SDK task, for the /a2a/tasks and /api/a2a routes. */
import type { Message, Task, TaskState } from '@a2a-js/sdk';
import { textOf } from './messages.ts';
import { a2aCore } from './sdk.ts';

/** 'completed', 'working', 'input-required'..., and the spec's spelling 'cancelled'. */
export function stateName(state: TaskState | undefined): string {
  if (state === a2aCore().TaskState.TASK_STATE_CANCELED) return 'cancelled';
  return a2aCore()
    .taskStateToJSON(state ?? a2aCore().TaskState.TASK_STATE_UNSPECIFIED)
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-');
}

/** Whether a task in this state is over (completed, failed, canceled or rejected). */
export function isTerminal(state: TaskState): boolean {
  const { TaskState: S } = a2aCore();
  return state === S.TASK_STATE_COMPLETED || state === S.TASK_STATE_FAILED || state === S.TASK_STATE_CANCELED || state === S.TASK_STATE_REJECTED;
}

const messageView = (m: Message) => ({ role: m.role === a2aCore().Role.ROLE_AGENT ? 'agent' : 'user', parts: [{ text: textOf(m) }] });

/** The reply: the final status message, else the last artifact. */
export function resultOf(task: Task): { role: string; parts: Array<{ text: string }> } | null {
  if (task.status?.message) return messageView(task.status.message);
  const artifact = task.artifacts.at(-1);
  return artifact ? { role: 'agent', parts: [{ text: textOf({ parts: artifact.parts } as Message) }] } : null;
}

export function taskView(task: Task, extra: Record<string, unknown> = {}) {
  return {
    task_id: task.id,
    status: stateName(task.status?.state),
    result: resultOf(task),
    context_id: task.contextId,
    agent_id: typeof task.metadata?.agent_id === 'string' ? task.metadata.agent_id : null,
    updated_at: task.status?.timestamp ?? null,
    history: task.history.map(messageView),
    ...extra,
  };
}

/** The task-board tools agents get: task_post, task_claim, task_complete. */
import { HttpError } from '@talon/module-sdk';
import type { ToolDefinition, ToolOutput } from '@talon/agents';
import type { Board } from './board.ts';

/** The agent UUID or name a task is assigned to must name an agent that exists (a typo would wait forever). */
export type AssigneeCheck = (assignee: string) => void;

export function boardTools(board: Board, checkAssignee: AssigneeCheck): ToolDefinition[] {
  return [
    {
      name: 'task_post',
      description: 'Posts a task on the shared task board, optionally for one agent (UUID or name); any agent may claim an unassigned task.',
      requiresAgent: true,
      source: 'tasks',
      inputSchema: {
        type: 'object',
        properties: {
          title: { type: 'string', minLength: 1, description: 'what is to be done, in a line' },
          description: { type: 'string', description: 'details the claimer needs' },
          assigned_to: { type: 'string', description: 'agent UUID or name; leave out for anyone' },
        },
        required: ['title'],
      },
      execute: (input, ctx) =>
        attempt(async () => {
          const assignee = typeof input.assigned_to === 'string' && input.assigned_to.trim() ? input.assigned_to.trim() : undefined;
          if (assignee) checkAssignee(assignee);
          const task = await board.post({
            title: String(input.title),
            description: optional(input.description),
            assignedTo: assignee,
            createdBy: ctx.agent.id,
          });
          return `Task posted: ${JSON.stringify(task)}`;
        }),
    },
    {
      name: 'task_claim',
      description: 'Claims a pending task: the one named by task_id, else the oldest task assigned to you, else the oldest unassigned one.',
      requiresAgent: true,
      source: 'tasks',
      inputSchema: { type: 'object', properties: { task_id: { type: 'string', description: 'a task to claim; leave out for the next one' } } },
      execute: (input, ctx) =>
        attempt(async () => {
          const task = await board.claim(ctx.agent.id, optional(input.task_id));
          if (task) return `Task claimed: ${JSON.stringify(task)}`;
          return input.task_id
            ? `Task '${String(input.task_id)}' cannot be claimed: it is not pending or is assigned to another agent.`
            : 'No task is waiting for you.';
        }),
    },
    {
      name: 'task_complete',
      description: 'Completes a task you claimed with its result (status "failed" when you could not do it).',
      requiresAgent: true,
      source: 'tasks',
      inputSchema: {
        type: 'object',
        properties: {
          task_id: { type: 'string', minLength: 1 },
          result: { type: 'string', description: 'the outcome, for whoever posted the task' },
          status: { type: 'string', enum: ['completed', 'failed'] },
        },
        required: ['task_id', 'result'],
      },
      execute: (input, ctx) =>
        attempt(async () => {
          const status = input.status === 'failed' ? 'failed' : 'completed';
          const task = await board.complete(ctx.agent.id, String(input.task_id), String(input.result), status);
          return `Task ${task.status}: ${task.id}`;
        }),
    },
  ];
}

const optional = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

/** Refusals (HttpError) become error results the model can read; anything else is the loop's to report. */
async function attempt(fn: () => Promise<string>): Promise<ToolOutput> {
  try {
    return { content: await fn() };
  } catch (err) {
    if (err instanceof HttpError) return { content: err.message, isError: true };
    throw err;
  }
}

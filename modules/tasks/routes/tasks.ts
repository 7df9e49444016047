/** The task board over HTTP: status, list, one task, post, cancel, retry, and POST /api/comms/task. */
import { notFound, pageQueryProperties, readPage, requireUuid, type Routes } from '@talon/module-sdk';
import type { Board } from '../services/board.ts';
import { STATUSES } from '../services/board.ts';
import type { AssigneeCheck } from '../services/tools.ts';

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

const postBody = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 512 },
    description: { type: 'string', maxLength: 64000 },
    assigned_to: { type: ['string', 'null'], description: 'agent UUID or name; null or left out: any agent may claim it' },
    created_by: { type: 'string', maxLength: 256 },
  },
  required: ['title'],
  additionalProperties: false,
} as const;

const listQuery = {
  type: 'object',
  properties: { ...pageQueryProperties, status: { type: 'string', enum: STATUSES }, assigned_to: { type: 'string' } },
  additionalProperties: false,
} as const;

export function taskRoutes(app: Routes, board: Board, checkAssignee: AssigneeCheck): void {
  const post = async (body: { title: string; description?: string; assigned_to?: string | null; created_by?: string }, createdBy: string) => {
    const assignee = body.assigned_to?.trim() || undefined;
    if (assignee) checkAssignee(assignee);
    return board.post({ title: body.title, description: body.description, assignedTo: assignee, createdBy: body.created_by ?? createdBy });
  };

  app.post('/api/comms/task', { schema: { summary: 'Posts a task on the board for an agent (or for any agent)', body: postBody } }, async (request, reply) => {
    const task = await post(request.body, 'api');
    return reply.code(201).send({ ok: true, task_id: task.id, status: task.status, task });
  });

  app.post('/api/tasks', { schema: { summary: 'Posts a task on the board', body: postBody } }, async (request, reply) => {
    return reply.code(201).send(await post(request.body, 'api'));
  });

  app.get('/api/tasks/status', { schema: { summary: 'Task counts by state' } }, async () => board.counts());

  app.get('/api/tasks/list', { schema: { summary: 'Tasks, newest first (filter by status)', querystring: listQuery } }, async (request) => {
    const page = readPage(request.query, { limit: 100, max: 1000 });
    return board.list({ status: request.query.status, assignedTo: request.query.assigned_to, ...page });
  });

  app.get('/api/tasks/:id', { schema: { summary: 'One task', params: idParams } }, async (request) => {
    const id = requireUuid(request.params.id, 'task id');
    const task = await board.get(id);
    if (!task) throw notFound(`task '${id}' not found`);
    return task;
  });

  app.delete(
    '/api/tasks/:id',
    { schema: { summary: 'Cancels a pending or claimed task (it stays listed as cancelled)', params: idParams } },
    async (request) => {
      const task = await board.cancel(requireUuid(request.params.id, 'task id'));
      return { status: 'cancelled', id: task.id, task };
    },
  );

  app.post('/api/tasks/:id/retry', { schema: { summary: 'Puts a failed or cancelled task back to pending', params: idParams } }, async (request) => {
    const task = await board.retry(requireUuid(request.params.id, 'task id'));
    return { status: 'retried', id: task.id, task };
  });
}

/** /api/schedules: the schedules view of the one job store. */
import { pageQueryProperties, paginate, readPage, type Routes } from '@talon/module-sdk';
import { jobBody } from '../services/input.ts';
import type { Scheduler } from '../services/scheduler.ts';
import { jobView, runView } from '../services/view.ts';

export const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
const pageQuery = { type: 'object', properties: pageQueryProperties, additionalProperties: false } as const;
const listQuery = { type: 'object', properties: { ...pageQueryProperties, agent_id: { type: 'string' } }, additionalProperties: false } as const;

export function scheduleRoutes(app: Routes, scheduler: Scheduler): void {
  app.get('/api/schedules', { schema: { summary: 'Schedules and cron jobs (one store)', querystring: listQuery } }, async (request) => {
    const page = readPage(request.query, { limit: 500, max: 5000 });
    return paginate((await scheduler.list(request.query.agent_id?.toLowerCase())).map(jobView), page);
  });

  app.post('/api/schedules', { schema: { summary: 'Creates a schedule', body: jobBody } }, async (request, reply) => {
    return reply.code(201).send(jobView(await scheduler.create(request.body, 'schedules')));
  });

  app.get('/api/schedules/:id', { schema: { summary: 'One schedule', params: idParams } }, async (request) =>
    jobView(await scheduler.require(request.params.id)),
  );

  app.put('/api/schedules/:id', { schema: { summary: 'Updates a schedule: the fields sent change', params: idParams, body: jobBody } }, async (request) =>
    jobView(await scheduler.update(request.params.id, request.body)),
  );

  app.delete('/api/schedules/:id', { schema: { summary: 'Deletes a schedule', params: idParams } }, async (request) => {
    const job = await scheduler.remove(request.params.id);
    return { status: 'removed', schedule_id: job.id };
  });

  app.post(
    '/api/schedules/:id/run',
    // Dear: a run starts an agent turn or a workflow.
    { schema: { summary: 'Runs a schedule now (its schedule stays as it is) and answers the outcome', params: idParams }, config: { rateCost: 100 } },
    async (request) => scheduler.runNow(request.params.id),
  );

  app.get(
    '/api/schedules/:id/runs',
    {
      schema: {
        summary: "A job's runs, scheduled and manual, newest first: slot (null: manual), manual, node, state (running, ok, error, lost)",
        params: idParams,
        querystring: pageQuery,
      },
    },
    async (request) => {
      const page = readPage(request.query, { limit: 100, max: 100 });
      return (await scheduler.history(request.params.id, page.limit, page.offset)).map(runView);
    },
  );
}

/** /api/cron/jobs: the cron-jobs view of the one job store, with enable and status. */
import { requireUuid, type Routes } from '@talon/module-sdk';
import { jobBody } from '../services/input.ts';
import type { Scheduler } from '../services/scheduler.ts';
import { jobStatus, jobView } from '../services/view.ts';
import { idParams } from './schedules.ts';

const listQuery = { type: 'object', properties: { agent_id: { type: 'string' } }, additionalProperties: false } as const;
const enableBody = {
  type: 'object',
  properties: { enabled: { type: 'boolean', description: 'left out: true' } },
  additionalProperties: false,
} as const;

export function cronRoutes(app: Routes, scheduler: Scheduler): void {
  app.get('/api/cron/jobs', { schema: { summary: 'Cron jobs and schedules (one store)', querystring: listQuery } }, async (request) => {
    const agentId = request.query.agent_id === undefined ? undefined : requireUuid(request.query.agent_id, 'agent_id');
    const jobs = (await scheduler.list(agentId)).map(jobView);
    return { jobs, total: jobs.length };
  });

  app.post('/api/cron/jobs', { schema: { summary: 'Creates a cron job', body: jobBody } }, async (request, reply) => {
    const job = await scheduler.create(request.body, 'cron');
    return reply.code(201).send({ job_id: job.id, status: 'created', job: jobView(job) });
  });

  app.get('/api/cron/jobs/:id', { schema: { summary: 'One cron job', params: idParams } }, async (request) =>
    jobView(await scheduler.require(request.params.id)),
  );

  app.put(
    '/api/cron/jobs/:id',
    { schema: { summary: 'Updates a cron job: schedule, prompt, agent and so on', params: idParams, body: jobBody } },
    async (request) => jobView(await scheduler.update(request.params.id, request.body)),
  );

  app.delete('/api/cron/jobs/:id', { schema: { summary: 'Deletes a cron job', params: idParams } }, async (request) => {
    const job = await scheduler.remove(request.params.id);
    return { status: 'deleted', job_id: job.id };
  });

  app.put('/api/cron/jobs/:id/enable', { schema: { summary: 'Enables or disables a cron job', params: idParams, body: enableBody } }, async (request) => {
    const job = await scheduler.setEnabled(request.params.id, request.body.enabled ?? true);
    return { id: job.id, enabled: job.enabled === 1, next_run: jobStatus(job).next_run };
  });

  app.get('/api/cron/jobs/:id/status', { schema: { summary: 'Last run result and next scheduled time', params: idParams } }, async (request) =>
    jobStatus(await scheduler.require(request.params.id)),
  );
}

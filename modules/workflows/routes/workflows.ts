/** /api/workflows: create, list, get, PUT (merge), DELETE, and the synchronous run. */
import { badRequest, notFound, requireUuid, type EventChannel, type Routes } from '@talon/module-sdk';
import type { workflowEvents } from '@talon/workflows';
import type { WorkflowsConfig } from '../config.ts';
import { createBody, normalizeSteps, updateBody, viewSteps } from '../services/definition.ts';
import type { Runner } from '../services/runner.ts';
import type { StoredWorkflow, WorkflowStore } from '../services/store.ts';

export const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

const runBody = {
  type: 'object',
  properties: { input: { description: 'the run input: text (an object is sent as its JSON text)' } },
  additionalProperties: false,
} as const;

/** A workflow by its UUID: 400 for a malformed id, 404 for an unknown one. */
export async function loadWorkflow(store: WorkflowStore, id: string): Promise<StoredWorkflow> {
  const wf = await store.get(requireUuid(id, 'workflow id'));
  if (!wf) throw notFound(`workflow '${id}' not found`);
  return wf;
}

export interface WorkflowRouteDeps {
  store: WorkflowStore;
  runner: Runner;
  config: () => WorkflowsConfig;
  events: Pick<EventChannel<typeof workflowEvents>, 'publish'>;
}

export function workflowRoutes(app: Routes, { store, runner, config, events }: WorkflowRouteDeps): void {
  const view = (wf: StoredWorkflow) => ({
    id: wf.id,
    name: wf.name,
    description: wf.description,
    steps: viewSteps(wf.steps, config().step_timeout_secs),
    total_timeout_secs: wf.total_timeout_secs,
    created_at: wf.created_at,
    updated_at: wf.updated_at,
  });
  const load = (id: string) => loadWorkflow(store, id);

  app.get('/api/workflows', { schema: { summary: 'Workflows' } }, async () =>
    (await store.list()).map((wf) => ({
      id: wf.id,
      name: wf.name,
      description: wf.description,
      steps: wf.steps.length,
      created_at: wf.created_at,
      updated_at: wf.updated_at,
    })),
  );

  app.post('/api/workflows', { schema: { summary: 'Creates a workflow', body: createBody } }, async (request, reply) => {
    const body = request.body;
    const wf = await store.create({
      name: body.name,
      description: body.description ?? '',
      steps: normalizeSteps(body.steps, config().max_steps),
      total_timeout_secs: body.total_timeout_secs ?? null,
    });
    return reply.code(201).send({ workflow_id: wf.id });
  });

  app.get('/api/workflows/:id', { schema: { summary: 'A workflow definition', params: idParams } }, async (request) => view(await load(request.params.id)));

  app.put(
    '/api/workflows/:id',
    { schema: { summary: 'Updates a workflow: the fields sent replace theirs', params: idParams, body: updateBody } },
    async (request) => {
      const wf = await load(request.params.id);
      const body = request.body;
      if (!Object.keys(body).length) throw badRequest('send at least one of name, description, steps, total_timeout_secs');
      const updated = await store.update(wf.id, {
        name: body.name ?? wf.name,
        description: body.description ?? wf.description,
        steps: body.steps ? normalizeSteps(body.steps, config().max_steps) : wf.steps,
        total_timeout_secs: body.total_timeout_secs === undefined ? wf.total_timeout_secs : body.total_timeout_secs,
      });
      return view(updated!);
    },
  );

  app.delete('/api/workflows/:id', { schema: { summary: 'Deletes a workflow and its runs', params: idParams } }, async (request) => {
    const wf = await load(request.params.id);
    await store.delete(wf.id);
    events.publish('workflow.deleted', { workflowId: wf.id, name: wf.name });
    return { status: 'removed', workflow_id: wf.id };
  });

  app.post(
    '/api/workflows/:id/run',
    // Dear: a run is a chain of agent turns.
    { schema: { summary: 'Runs a workflow and answers when it ends', params: idParams, body: runBody }, config: { rateCost: 100 } },
    async (request) => {
      const wf = await load(request.params.id);
      const input = request.body.input;
      return runner.execute(wf, typeof input === 'string' ? input : input === undefined || input === null ? '' : JSON.stringify(input), 'http');
    },
  );
}

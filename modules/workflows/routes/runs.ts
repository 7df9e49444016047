/** Workflow runs: a workflow's runs (newest first), one run with its step results, cancel. */
import { notFound, pageQueryProperties, readPage, requireUuid, type Routes } from '@talon/module-sdk';
import type { RunRow, RunStore } from '../services/runs.ts';
import type { Runner } from '../services/runner.ts';
import type { WorkflowStore } from '../services/store.ts';
import { idParams } from './workflows.ts';

const runParams = { type: 'object', properties: { run_id: { type: 'string' } }, required: ['run_id'] } as const;
const pageQuery = { type: 'object', properties: pageQueryProperties, additionalProperties: false } as const;

const listItem = (r: RunRow) => ({
  id: r.id,
  workflow_id: r.workflow_id,
  workflow_name: r.workflow_name,
  state: r.state,
  steps_completed: r.steps_completed,
  origin: r.origin,
  error: r.error,
  started_at: r.started_at ?? r.created_at,
  completed_at: r.completed_at,
});

export function runRoutes(app: Routes, store: WorkflowStore, runs: RunStore, runner: Runner): void {
  const loadRun = async (id: string) => {
    const run = await runs.get(requireUuid(id, 'run id'));
    if (!run) throw notFound(`run '${id}' not found`);
    return run;
  };

  app.get('/api/workflows/:id/runs', { schema: { summary: "A workflow's runs, newest first", params: idParams, querystring: pageQuery } }, async (request) => {
    const id = requireUuid(request.params.id, 'workflow id');
    if (!(await store.get(id))) throw notFound(`workflow '${id}' not found`);
    const page = readPage(request.query, { limit: 100, max: 1000 });
    return (await runs.list(id, page.limit, page.offset)).map(listItem);
  });

  app.get('/api/workflows/runs/:run_id', { schema: { summary: 'A run with its input, output and step results', params: runParams } }, async (request) => {
    const run = await loadRun(request.params.run_id);
    return { ...listItem(run), input: run.input, output: run.output, created_at: run.created_at, step_results: await runs.steps(run.id) };
  });

  app.post('/api/workflows/runs/:run_id/cancel', { schema: { summary: 'Cancels a running run', params: runParams } }, async (request) => {
    const run = await loadRun(request.params.run_id);
    await runner.cancel(run.id);
    return { run_id: run.id, state: (await runs.get(run.id))?.state };
  });
}

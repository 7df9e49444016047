/**
 * Workflow templates: the list (search and category), one template, instantiate (a new workflow from parameter
 * values), delete a saved one, and POST /api/workflows/{id}/save-as-template.
 */
import { conflict, notFound, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { WorkflowsConfig } from '../config.ts';
import { instantiate, templateOf } from '../services/instantiate.ts';
import { TEMPLATE_ID, type WorkflowTemplate } from '../services/template-format.ts';
import type { TemplateCatalog } from '../services/templates.ts';
import type { WorkflowStore } from '../services/store.ts';
import { idParams, loadWorkflow } from './workflows.ts';

const tags = ['workflows'];
const templateParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 128 } }, required: ['id'] } as const;
const listQuery = {
  type: 'object',
  properties: {
    q: { type: 'string', maxLength: 200, description: 'words that must all occur in the id, name, description, category or tags (any case)' },
    category: { type: 'string', maxLength: 64, description: 'only this category' },
  },
  additionalProperties: false,
} as const;
const instantiateQuery = {
  type: 'object',
  properties: {
    agent: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      description: 'agent (name or UUID) of the steps that name none; default: the agent named "default"',
    },
    name: { type: 'string', minLength: 1, maxLength: 256, description: "the new workflow's name; default: the template's" },
  },
  additionalProperties: false,
} as const;
const instantiateBody = {
  type: 'object',
  description: 'the parameter values by name',
  additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
} as const;
const saveBody = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: TEMPLATE_ID, description: "default: the slug of the template's name" },
    name: { type: 'string', minLength: 1, maxLength: 256, description: "default: the workflow's name" },
    description: { type: 'string', maxLength: 4096 },
    category: { type: 'string', maxLength: 64 },
    tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, maxItems: 50 },
    replace: { type: 'boolean', default: false, description: 'replace a template that has this id (a saved one, or a registry one it then hides)' },
  },
  additionalProperties: false,
} as const;

export interface TemplateRouteDeps {
  templates: TemplateCatalog;
  store: WorkflowStore;
  agents: () => AgentRegistry;
  config: () => WorkflowsConfig;
}

export function templateRoutes(app: Routes, { templates, store, agents, config }: TemplateRouteDeps): void {
  const load = async (id: string) => {
    const t = await templates.get(id);
    if (!t) throw notFound(`workflow template '${id}' not found`);
    return t;
  };

  app.get('/api/workflow-templates', { schema: { summary: 'Workflow templates, saved ones first', tags, querystring: listQuery } }, async (request) => {
    const all = await templates.list();
    const { q, category } = request.query;
    const words = (q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const found = all.filter((t) => (!category || t.category === category) && words.every((w) => searchText(t).includes(w)));
    const counts = new Map<string, number>();
    for (const t of all) if (t.category) counts.set(t.category, (counts.get(t.category) ?? 0) + 1);
    const registry = templates.registryStatus();
    return {
      templates: found,
      total: found.length,
      categories: [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([name, count]) => ({ name, count })),
      registry: registry && {
        revision: registry.revision,
        synced_at: registry.synced_at,
        offline: registry.offline,
        ...(registry.error && { error: registry.error }),
      },
    };
  });

  app.get('/api/workflow-templates/:id', { schema: { summary: 'One workflow template', tags, params: templateParams } }, async (request) =>
    load(request.params.id),
  );

  app.post(
    '/api/workflow-templates/:id/instantiate',
    {
      schema: {
        summary: 'Creates a workflow from a template and parameter values',
        tags,
        params: templateParams,
        querystring: instantiateQuery,
        body: instantiateBody,
      },
    },
    async (request, reply) => {
      const t = await load(request.params.id);
      const def = instantiate(t, request.body, { ...request.query, maxSteps: config().max_steps }, agents());
      const wf = await store.create(def);
      request.log.info({ template: t.id, workflow: wf.id }, 'workflow created from a template');
      return reply.code(201).send({ workflow_id: wf.id, template_id: t.id, status: 'instantiated' });
    },
  );

  app.delete('/api/workflow-templates/:id', { schema: { summary: 'Deletes a saved workflow template', tags, params: templateParams } }, async (request) => {
    const t = await load(request.params.id);
    if (t.source !== 'user')
      throw conflict(`workflow template '${t.id}' comes from the ${t.source.replace(/^registry:/, '')} registry: only saved templates can be deleted`);
    await templates.delete(t.id);
    return { status: 'removed', template_id: t.id };
  });

  app.post(
    '/api/workflows/:id/save-as-template',
    { schema: { summary: 'Saves a workflow as a template (201 created; 200 when it replaced one)', tags, params: idParams, body: saveBody } },
    async (request, reply) => {
      const wf = await loadWorkflow(store, request.params.id);
      const { replace, ...fields } = request.body;
      const template = templateOf(wf, fields);
      const existing = await templates.get(template.id);
      if (existing && !replace)
        throw conflict(`a workflow template '${template.id}' exists (${existing.source}): give another id, or replace: true to put this one in its place`);
      await templates.save(template);
      request.log.info({ template: template.id, workflow: wf.id }, 'workflow saved as a template');
      return reply.code(existing ? 200 : 201).send({ status: existing ? 'updated' : 'created', template });
    },
  );
}

function searchText(t: WorkflowTemplate): string {
  return `${t.id} ${t.name} ${t.description} ${t.category ?? ''} ${t.tags.join(' ')}`.toLowerCase();
}

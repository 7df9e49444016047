/** /api/goals: create, list, get, PUT, DELETE (with descendants), children, templates (and applying one). */
import { badRequest, isUuid, notFound, pageQueryProperties, paginate, readPage, requireUuid, type FromSchema, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import { STATUSES, type Goal, type GoalFields, type GoalStore } from '../services/store.ts';
import { TEMPLATES } from '../services/templates.ts';

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
const nullableId = { type: ['string', 'null'] } as const;
const dueAt = { type: ['string', 'null'], description: 'ISO 8601 date or date-time; null clears' } as const;

const properties = {
  title: { type: 'string', minLength: 1, maxLength: 256 },
  description: { type: 'string', maxLength: 4096 },
  status: { type: 'string', enum: STATUSES },
  progress: { type: 'integer', minimum: 0, maximum: 100 },
  agent_id: nullableId,
  parent_id: nullableId,
  due_at: dueAt,
  due_date: { ...dueAt, description: 'another spelling of due_at' },
} as const;

const createBody = { type: 'object', properties, required: ['title'], additionalProperties: false } as const;
const updateBody = { type: 'object', properties, additionalProperties: false } as const;
const applyBody = {
  type: 'object',
  properties: { title: properties.title, agent_id: nullableId, parent_id: nullableId, due_at: dueAt },
  additionalProperties: false,
} as const;
const listQuery = {
  type: 'object',
  properties: {
    ...pageQueryProperties,
    status: { type: 'string', enum: STATUSES },
    agent_id: { type: 'string' },
    parent_id: { type: 'string', description: "a goal id, or 'none' for top-level goals" },
  },
  additionalProperties: false,
} as const;

type Update = FromSchema<typeof updateBody>;

export function goalRoutes(app: Routes, store: GoalStore, agents: () => AgentRegistry | undefined): void {
  const load = async (id: string) => {
    const goal = await store.get(requireUuid(id, 'goal id'));
    if (!goal) throw notFound(`goal '${id}' not found`);
    return goal;
  };
  /** The fields after a body: omitted keeps, null clears. 400/404 naming the problem. */
  const apply = async (body: Update, base: GoalFields): Promise<GoalFields> => {
    if (body.due_at !== undefined && body.due_date !== undefined) throw badRequest('give due_at or due_date, not both');
    const due = body.due_at !== undefined ? body.due_at : body.due_date;
    const title = body.title === undefined ? base.title : body.title.trim();
    if (!title) throw badRequest('title must not be blank');
    return {
      title,
      description: body.description ?? base.description,
      status: body.status ?? base.status,
      progress: body.progress ?? base.progress,
      agent_id: body.agent_id === undefined ? base.agent_id : body.agent_id === null ? null : agentRef(body.agent_id, agents),
      parent_id: body.parent_id === undefined ? base.parent_id : body.parent_id === null ? null : (await load(body.parent_id)).id,
      due_at: due === undefined ? base.due_at : due === null ? null : isoDate(due),
    };
  };

  app.get('/api/goals', { schema: { summary: 'Goals, oldest first', querystring: listQuery } }, async (request) => {
    const q = request.query;
    const parentId = q.parent_id === undefined ? undefined : q.parent_id === 'none' ? null : requireUuid(q.parent_id, 'parent_id');
    const goals = await store.list({ status: q.status, agentId: q.agent_id?.toLowerCase(), parentId });
    return paginate(goals, readPage(q, { limit: 500, max: 5000 }));
  });

  app.post('/api/goals', { schema: { summary: 'Creates a goal', body: createBody } }, async (request, reply) => {
    const empty: GoalFields = { title: '', description: '', status: 'pending', progress: 0, agent_id: null, parent_id: null, due_at: null };
    return reply.code(201).send(await store.create(await apply(request.body, empty)));
  });

  app.get('/api/goals/templates', { schema: { summary: 'Goal templates' } }, async () => ({ templates: TEMPLATES }));

  app.post(
    '/api/goals/templates/:id/apply',
    { schema: { summary: 'Creates the goal tree of a template', params: idParams, body: applyBody } },
    async (request, reply) => {
      const template = TEMPLATES.find((t) => t.id === request.params.id);
      if (!template) throw notFound(`goal template '${request.params.id}' not found`);
      const base = await apply(request.body, {
        title: template.name,
        description: template.description,
        status: 'pending',
        progress: 0,
        agent_id: null,
        parent_id: null,
        due_at: null,
      });
      const tree = await store.createMany(async (create) => {
        const goal = await create(base);
        const children: Goal[] = [];
        for (const g of template.goals) children.push(await create({ ...base, ...g, parent_id: goal.id }));
        return { goal, children };
      });
      return reply.code(201).send(tree);
    },
  );

  app.get('/api/goals/:id', { schema: { summary: 'One goal', params: idParams } }, async (request) => load(request.params.id));

  app.put(
    '/api/goals/:id',
    { schema: { summary: 'Updates title, status, description, progress, due date, parent, agent', params: idParams, body: updateBody } },
    async (request) => {
      const goal = await load(request.params.id);
      if (!Object.keys(request.body).length) throw badRequest('send at least one field to change');
      return store.update(goal.id, await apply(request.body, goal));
    },
  );

  app.delete('/api/goals/:id', { schema: { summary: 'Deletes a goal and all its descendants', params: idParams } }, async (request) => {
    const goal = await load(request.params.id);
    return { status: 'deleted', id: goal.id, removed: await store.delete(goal.id) };
  });

  app.get('/api/goals/:id/children', { schema: { summary: 'The direct sub-goals of a goal', params: idParams } }, async (request) => {
    const children = await store.list({ parentId: (await load(request.params.id)).id });
    return { children, total: children.length };
  });
}

function agentRef(id: string, agents: () => AgentRegistry | undefined): string {
  if (!isUuid(id)) throw badRequest(`invalid agent_id: '${id}' is not a UUID`);
  const registry = agents();
  if (registry && !registry.get(id.toLowerCase())) throw notFound(`agent '${id}' not found`);
  return id.toLowerCase();
}

function isoDate(text: string): string {
  const ms = /^\d{4}-\d\d-\d\d/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw badRequest(`due_at '${text}' is not an ISO 8601 date or date-time`);
  return new Date(ms).toISOString();
}

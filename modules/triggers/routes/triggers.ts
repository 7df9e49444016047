/** /api/triggers: create, list, get, PATCH (omitted unchanged, null clears), DELETE. */
import { conflict, isUuid, notFound, requireUuid, badRequest, type FromSchema, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { WorkflowRunner } from '@talon/workflows';
import { normalizePattern } from '../services/pattern.ts';
import type { Engine } from '../services/engine.ts';
import type { Trigger, TriggerFields, TriggerStore } from '../services/store.ts';

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
const listQuery = { type: 'object', properties: { agent_id: { type: 'string' } }, additionalProperties: false } as const;

const changeable = {
  pattern: { anyOf: [{ type: 'string' }, { type: 'object' }], description: 'e.g. {"lifecycle": {}}, {"task_posted": {"assignee_match": "self"}}' },
  prompt_template: {
    type: 'string',
    minLength: 1,
    maxLength: 100000,
    description: 'the message sent on a fire; {{event}} becomes a line describing the event',
  },
  enabled: { type: 'boolean' },
  max_fires: { type: 'integer', minimum: 0, description: '0 = unlimited; at the limit the trigger disables itself' },
  cooldown_secs: { type: ['integer', 'null'], minimum: 0, description: 'null = [triggers] cooldown_secs' },
  session_mode: { type: ['string', 'null'], enum: ['persistent', 'new', null], description: "null = the agent manifest's session_mode (else persistent)" },
  target_agent_id: { type: ['string', 'null'], description: 'send the fired message to this agent instead of the owner' },
  workflow_id: { type: ['string', 'null'], description: 'run this workflow (UUID or name) with the rendered prompt as input instead of a turn' },
} as const;

const createBody = {
  type: 'object',
  properties: { agent_id: { type: 'string' }, ...changeable },
  required: ['agent_id', 'pattern', 'prompt_template'],
  additionalProperties: false,
} as const;
const patchBody = { type: 'object', properties: changeable, additionalProperties: false } as const;
type Patch = FromSchema<typeof patchBody>;

export interface TriggerRouteDeps {
  store: TriggerStore;
  engine: Engine;
  agents: () => AgentRegistry;
  workflows: () => WorkflowRunner | undefined;
}

export function triggerRoutes(app: Routes, deps: TriggerRouteDeps): void {
  const { store, engine } = deps;
  const load = async (id: string): Promise<Trigger> => {
    const t = await store.get(requireUuid(id, 'trigger id'));
    if (!t) throw notFound(`trigger '${id}' not found`);
    return t;
  };

  app.get('/api/triggers', { schema: { summary: 'Triggers (optionally of one agent)', querystring: listQuery } }, async (request) => {
    const agentId = request.query.agent_id === undefined ? undefined : requireUuid(request.query.agent_id, 'agent_id');
    return (await store.all()).filter((t) => !agentId || t.agent_id === agentId);
  });

  app.post('/api/triggers', { schema: { summary: 'Creates a trigger', body: createBody } }, async (request, reply) => {
    const agent = deps.agents().get(requireUuid(request.body.agent_id, 'agent_id'));
    if (!agent) throw notFound(`agent '${request.body.agent_id}' not found`);
    const fields = await apply(deps, request.body, {
      agent_id: agent.id,
      pattern: {},
      prompt_template: '',
      enabled: true,
      max_fires: 0,
      cooldown_secs: null,
      session_mode: null,
      target_agent_id: null,
      workflow_id: null,
    });
    const trigger = await store.create(fields);
    engine.put(trigger);
    return reply.code(201).send({ trigger_id: trigger.id, agent_id: trigger.agent_id });
  });

  app.get('/api/triggers/:id', { schema: { summary: 'One trigger', params: idParams } }, async (request) => load(request.params.id));

  app.patch(
    '/api/triggers/:id',
    { schema: { summary: 'Changes the fields sent (null clears an override)', params: idParams, body: patchBody } },
    async (request) => {
      const existing = await load(request.params.id);
      const fields = await apply(deps, request.body, existing);
      const exhausted = fields.max_fires > 0 && existing.fire_count >= fields.max_fires;
      if (request.body.enabled === true && exhausted)
        throw conflict(`trigger has fired ${existing.fire_count} of max_fires ${fields.max_fires} times; raise max_fires to enable it`);
      const patternChanged = JSON.stringify(fields.pattern) !== JSON.stringify(existing.pattern);
      const trigger = await store.update(existing.id, fields, patternChanged);
      engine.put(trigger, patternChanged);
      return trigger;
    },
  );

  app.delete('/api/triggers/:id', { schema: { summary: 'Deletes a trigger', params: idParams } }, async (request) => {
    const t = await load(request.params.id);
    await store.delete(t.id);
    engine.remove(t.id);
    return { status: 'removed', trigger_id: t.id };
  });
}

/** The fields after a create or PATCH body: omitted keeps, null clears (to the default). 400/404 naming the problem. */
async function apply(deps: TriggerRouteDeps, body: Patch, base: TriggerFields): Promise<TriggerFields> {
  const next: TriggerFields = { ...base };
  if (body.pattern !== undefined) next.pattern = normalizePattern(body.pattern);
  if (body.prompt_template !== undefined) next.prompt_template = body.prompt_template;
  if (body.enabled !== undefined) next.enabled = body.enabled;
  if (body.max_fires !== undefined) next.max_fires = body.max_fires;
  if (body.cooldown_secs !== undefined) next.cooldown_secs = body.cooldown_secs;
  if (body.session_mode !== undefined) next.session_mode = body.session_mode as TriggerFields['session_mode'];
  if (body.target_agent_id !== undefined) next.target_agent_id = body.target_agent_id === null ? null : agentRef(deps, body.target_agent_id, 'target_agent_id');
  if (body.workflow_id !== undefined) next.workflow_id = body.workflow_id === null ? null : await workflowRef(deps, body.workflow_id);
  return next;
}

function agentRef(deps: TriggerRouteDeps, id: string, field: string): string {
  if (!isUuid(id)) throw badRequest(`invalid ${field}: '${id}' is not a UUID`);
  const agent = deps.agents().get(id.toLowerCase());
  if (!agent) throw notFound(`agent '${id}' (${field}) not found`);
  return agent.id;
}

async function workflowRef(deps: TriggerRouteDeps, ref: string): Promise<string> {
  const workflows = deps.workflows();
  if (!workflows) throw badRequest('workflow_id needs the workflows module, which is not running');
  const wf = await workflows.find(ref);
  if (!wf) throw notFound(`workflow '${ref}' not found`);
  return wf.id;
}

/**
 * One request body for both views (/api/schedules and /api/cron/jobs), with the reference's spellings as aliases:
 * `cron` or `schedule` (a string, or {kind: cron|every|at, ...}), `prompt` or `message` or `action.message`,
 * `workflow_id` or `action: {kind: workflow, workflow_id}`. A create and an update go through normalize().
 */
import { badRequest, conflict, isUuid, notFound, type FromSchema } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { WorkflowRunner } from '@talon/workflows';
import { MISFIRE_POLICIES, type SchedulerConfig } from '../config.ts';
import type { JobFields, JobRow } from './jobs.ts';
import type { Schedules } from './spec.ts';

const scheduleObject = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['cron', 'every', 'at'] },
    expr: { type: 'string', minLength: 1 },
    tz: { type: ['string', 'null'] },
    every_secs: { type: 'integer', minimum: 1 },
    at: { type: 'string', minLength: 1 },
  },
  required: ['kind'],
  additionalProperties: false,
} as const;

const actionObject = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['agent_turn', 'workflow'] },
    message: { type: 'string', maxLength: 100000 },
    workflow_id: { type: 'string', minLength: 1 },
    input: { type: 'string', maxLength: 100000 },
    timeout_secs: { type: 'integer', minimum: 0 },
  },
  required: ['kind'],
  additionalProperties: false,
} as const;

const jobProperties = {
  name: { type: 'string', minLength: 1, maxLength: 128 },
  agent_id: { type: 'string', minLength: 1, description: 'agent UUID (or name)' },
  workflow_id: { type: ['string', 'null'], description: 'run this workflow (UUID or name) instead of an agent turn' },
  cron: { type: 'string', minLength: 1, description: '5-field cron, "every 5m" or "at <ISO time>"' },
  schedule: { anyOf: [{ type: 'string', minLength: 1 }, scheduleObject] },
  tz: { type: ['string', 'null'], description: 'IANA time zone of the cron expression; default UTC' },
  prompt: { type: 'string', maxLength: 100000 },
  message: { type: 'string', maxLength: 100000, description: 'another spelling of prompt' },
  action: actionObject,
  enabled: { type: 'boolean' },
  one_shot: { type: 'boolean', description: 'disable the job after its first successful run' },
  session_mode: { type: ['string', 'null'], enum: ['persistent', 'new', null] },
  misfire_policy: { type: ['string', 'null'], enum: [...MISFIRE_POLICIES, null] },
  timeout_secs: { type: ['integer', 'null'], minimum: 0 },
} as const;

export const jobBody = { type: 'object', properties: jobProperties, additionalProperties: false } as const;
export type JobBody = FromSchema<typeof jobBody>;

export interface InputDeps {
  schedules: Schedules;
  config: () => SchedulerConfig;
  agents: () => AgentRegistry;
  workflows: () => WorkflowRunner | undefined;
}

/**
 * The fields to write for a create (no `existing`) or an update; 400/404/409 naming the problem. `handler` is set
 * only by the scheduler.jobs service: a module's handler the job runs instead of a turn.
 */
export async function normalize(deps: InputDeps, body: JobBody, existing?: JobRow, handler?: string): Promise<{ fields: JobFields; reset: boolean }> {
  if (existing?.handler) refuseRetargeting(body, existing);
  const now = Date.now();
  const text = scheduleText(body) ?? existing?.schedule;
  if (!text) throw badRequest('cron (or schedule) is required: a 5-field cron expression, "every 5m" or "at <ISO time>"');
  const objectTz = typeof body.schedule === 'object' ? body.schedule.tz : undefined;
  const tzGiven = body.tz !== undefined ? body.tz : objectTz;
  const tz = tzGiven !== undefined ? tzGiven : (existing?.tz ?? null);
  const scheduleChanged = !existing || text !== existing.schedule || (tz ?? 'UTC') !== existing.tz;
  const check = scheduleChanged ? { minIntervalSecs: deps.config().min_interval_secs, now } : undefined;
  const schedule = deps.schedules.parse(text, tz, check);
  const { agentId, workflowId, targetName } = await target(deps, body, existing);
  const enabled = body.enabled ?? (existing ? existing.enabled === 1 : true);
  const anchor = scheduleChanged ? now : existing!.anchor;
  const enabling = enabled && (!existing || existing.enabled === 0);
  let next = existing?.next_run ?? null;
  if (!enabled) next = null;
  else if (scheduleChanged || enabling || next === null) next = deps.schedules.next(schedule, anchor, now);
  if (enabled && next === null) throw conflict(`'${text}' has no run left; give a new schedule to enable the job`);
  const action = body.action;
  const fields: JobFields = {
    name: body.name ?? existing?.name ?? `${targetName} ${text}`.slice(0, 128),
    agent_id: agentId,
    workflow_id: workflowId,
    handler: handler ?? existing?.handler ?? null,
    schedule: text,
    kind: schedule.kind,
    tz: schedule.tz,
    prompt: body.prompt ?? body.message ?? action?.message ?? action?.input ?? existing?.prompt ?? '',
    enabled: enabled ? 1 : 0,
    one_shot: body.one_shot === undefined ? (existing?.one_shot ?? 0) : body.one_shot ? 1 : 0,
    session_mode: pick(body.session_mode, existing?.session_mode),
    misfire_policy: pick(body.misfire_policy, existing?.misfire_policy),
    timeout_secs: pick(body.timeout_secs !== undefined ? body.timeout_secs : action?.timeout_secs, existing?.timeout_secs),
    anchor,
    next_run: next,
  };
  const toggled = existing !== undefined && body.enabled !== undefined && (body.enabled ? 1 : 0) !== existing.enabled;
  return { fields, reset: scheduleChanged || toggled };
}

/** A job that runs a module's handler keeps its target: only when it runs may change. */
function refuseRetargeting(body: JobBody, job: JobRow): void {
  const retarget = (['agent_id', 'workflow_id', 'prompt', 'message', 'action', 'session_mode'] as const).filter((k) => body[k] !== undefined);
  if (retarget.length) {
    throw badRequest(`job '${job.name}' runs the module handler '${job.handler}': ${retarget.join(', ')} cannot change (its schedule, zone and state can)`);
  }
}

/** The schedule text of a body: `cron`, or `schedule` as a string or an object. */
function scheduleText(body: JobBody): string | undefined {
  const s = body.schedule;
  const fromObject =
    s === undefined || typeof s === 'string'
      ? s
      : s.kind === 'cron'
        ? required(s.expr, 'schedule.expr')
        : s.kind === 'every'
          ? `every ${required(s.every_secs, 'schedule.every_secs')}s`
          : `at ${required(s.at, 'schedule.at')}`;
  if (body.cron !== undefined && fromObject !== undefined && body.cron !== fromObject) throw badRequest('give cron or schedule, not both');
  return body.cron ?? fromObject;
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw badRequest(`${what} is required for this kind`);
  return value;
}

/** The agent (UUID or name) and the workflow (UUID or name) the job runs, resolved to ids. */
async function target(deps: InputDeps, body: JobBody, existing?: JobRow): Promise<{ agentId: string | null; workflowId: string | null; targetName: string }> {
  let agentId = existing?.agent_id ?? null;
  let targetName = '';
  if (body.agent_id !== undefined) {
    const registry = deps.agents();
    const agent = isUuid(body.agent_id) ? registry.get(body.agent_id.toLowerCase()) : registry.findByName(body.agent_id);
    if (!agent) throw notFound(`agent '${body.agent_id}' not found`);
    agentId = agent.id;
    targetName = agent.name;
  }
  const workflowRef = body.workflow_id !== undefined ? body.workflow_id : body.action?.kind === 'workflow' ? body.action.workflow_id : undefined;
  let workflowId = existing?.workflow_id ?? null;
  if (workflowRef === null) workflowId = null;
  else if (workflowRef !== undefined) {
    const workflows = deps.workflows();
    if (!workflows) throw badRequest('workflow jobs need the workflows module, which is not running');
    const wf = await workflows.find(workflowRef);
    if (!wf) throw notFound(`workflow '${workflowRef}' not found`);
    workflowId = wf.id;
    targetName = wf.name;
  }
  if (!agentId && !workflowId) throw badRequest('agent_id (or workflow_id) is required');
  if (!targetName) targetName = (workflowId ? (await deps.workflows()?.find(workflowId))?.name : deps.agents().get(agentId!)?.name) ?? 'job';
  return { agentId, workflowId, targetName };
}

/** A nullable field of an update: left out keeps it, null clears it. */
function pick<T>(given: T | null | undefined, existing: T | null | undefined): T | null {
  return given === undefined ? (existing ?? null) : given;
}

/**
 * Workflow definitions: the request schemas, and the normalised form stored and returned. A step's unset
 * timeout stays null in storage so a changed default applies to it; reads show the effective value.
 */
import { badRequest, isUuid, type FromSchema } from '@talon/module-sdk';
import type { SessionMode } from '@talon/tasks';
import { checkGraph, isGraph } from './graph.ts';

export const MODES = ['sequential', 'fan_out', 'collect', 'conditional', 'loop'] as const;
export const ERROR_MODES = ['fail', 'skip', 'retry'] as const;
export type Mode = (typeof MODES)[number];
export type ErrorMode = (typeof ERROR_MODES)[number];

export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_MAX_ITERATIONS = 5;

/** The reference's nested spellings: `{conditional: {condition}}`, `{loop: {max_iterations, until}}`, `{retry: {...}}`. */
const nestedMode = {
  type: 'object',
  properties: {
    conditional: { type: 'object', properties: { condition: { type: 'string', maxLength: 4096 } }, additionalProperties: false },
    loop: {
      type: 'object',
      properties: { max_iterations: { type: 'integer', minimum: 1, maximum: 1000 }, until: { type: 'string', maxLength: 4096 } },
      additionalProperties: false,
    },
  },
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: false,
} as const;
const nestedRetry = {
  type: 'object',
  properties: {
    retry: {
      type: 'object',
      properties: { max_retries: { type: 'integer', minimum: 0, maximum: 100 }, backoff_ms: { type: 'integer', minimum: 0, maximum: 3600000 } },
      additionalProperties: false,
    },
  },
  required: ['retry'],
  additionalProperties: false,
} as const;

export const stepSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 128 },
    agent_id: { type: 'string', description: 'agent UUID; use this or agent_name' },
    agent_name: { type: 'string', minLength: 1, maxLength: 128 },
    agent: {
      type: 'object',
      properties: { agent_id: { type: 'string' }, agent_name: { type: 'string', minLength: 1, maxLength: 128 } },
      additionalProperties: false,
      description: "the reference's spelling: {agent_id} or {agent_name}",
    },
    prompt: { type: 'string', maxLength: 100000, description: 'template: {{input}} and {{<output_var>}}; default "{{input}}"' },
    prompt_template: { type: 'string', maxLength: 100000, description: 'another spelling of prompt' },
    mode: { anyOf: [{ type: 'string', enum: MODES }, nestedMode] },
    timeout_secs: { type: 'integer', minimum: 0, description: 'per step; default [workflows] step_timeout_secs (120); 0 = no limit' },
    error_mode: { anyOf: [{ type: 'string', enum: ERROR_MODES }, nestedRetry] },
    max_retries: { type: 'integer', minimum: 0, maximum: 100 },
    backoff_ms: { type: 'integer', minimum: 0, maximum: 3600000, description: 'retry: first wait, doubling each attempt' },
    output_var: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 64 },
    condition: { type: 'string', maxLength: 4096 },
    max_iterations: { type: 'integer', minimum: 1, maximum: 1000 },
    until: { type: 'string', maxLength: 4096 },
    session_mode: { type: ['string', 'null'], enum: ['persistent', 'new', null] },
    summarize: {
      type: 'boolean',
      description: "collect: run one turn on the step's agent over the gathered results (its reply is the step's output); default false",
    },
    depends_on: {
      type: 'array',
      items: { type: 'string', minLength: 1, maxLength: 128 },
      uniqueItems: true,
      maxItems: 1000,
      description: 'names of the steps this one runs after; any non-empty depends_on makes the workflow a graph (graph.ts)',
    },
  },
  additionalProperties: false,
} as const;

const commonProperties = {
  name: { type: 'string', minLength: 1, maxLength: 256 },
  description: { type: 'string', maxLength: 4096 },
  steps: { type: 'array', items: stepSchema },
  total_timeout_secs: { type: ['integer', 'null'], minimum: 0, description: 'whole-run limit; null = [workflows] run_timeout_secs' },
} as const;

export const createBody = { type: 'object', properties: commonProperties, required: ['name', 'steps'], additionalProperties: false } as const;
export const updateBody = { type: 'object', properties: commonProperties, additionalProperties: false } as const;

export type StepInput = FromSchema<typeof stepSchema>;
export type CreateInput = FromSchema<typeof createBody>;
export type UpdateInput = FromSchema<typeof updateBody>;

export interface Step {
  name: string;
  agent_id: string | null;
  agent_name: string | null;
  prompt: string;
  mode: Mode;
  /** null: the configured default. */
  timeout_secs: number | null;
  error_mode: ErrorMode;
  max_retries: number;
  backoff_ms: number | null;
  output_var: string | null;
  condition: string;
  max_iterations: number;
  until: string;
  session_mode: SessionMode | null;
  summarize: boolean;
  depends_on: string[];
}

export interface Definition {
  name: string;
  description: string;
  steps: Step[];
  total_timeout_secs: number | null;
}

/** A step in the flat form: the reference's nested mode, retry and agent spellings unfolded into their fields. */
function flatten(step: StepInput): Omit<StepInput, 'mode' | 'error_mode' | 'agent'> & { mode?: Mode; error_mode?: ErrorMode } {
  const { mode, error_mode, agent, ...flat } = step;
  const merge = <T extends object>(what: string, fields: T) => {
    for (const [k, v] of Object.entries(fields)) {
      const key = k as keyof typeof flat;
      if (flat[key] !== undefined && flat[key] !== v) throw badRequest(`step '${step.name ?? '?'}': ${k} is given twice (in ${what} and beside it)`);
      (flat as Record<string, unknown>)[k] = v;
    }
  };
  if (agent) merge('agent', agent);
  let m: Mode | undefined;
  if (typeof mode === 'object') {
    const [[kind, fields]] = Object.entries(mode) as Array<[Mode, object]>;
    merge('mode', fields ?? {});
    m = kind;
  } else m = mode;
  let e: ErrorMode | undefined;
  if (typeof error_mode === 'object') {
    merge('error_mode', error_mode.retry ?? {});
    e = 'retry';
  } else e = error_mode;
  return { ...flat, mode: m, error_mode: e };
}

/** Checks what the schema cannot say and fills in the defaults. Throws 400 naming the step. */
export function normalizeSteps(steps: readonly StepInput[], maxSteps: number): Step[] {
  if (steps.length > maxSteps) throw badRequest(`a workflow has at most ${maxSteps} steps; this one has ${steps.length}`);
  const normalized = steps.map(flatten).map(normalizeStep);
  if (isGraph(normalized)) checkGraph(normalized);
  return normalized;
}

function normalizeStep(s: ReturnType<typeof flatten>, i: number): Step {
  const name = s.name ?? `step ${i + 1}`;
  const where = `step '${name}'`;
  const mode = s.mode ?? 'sequential';
  if (s.agent_id !== undefined && !isUuid(s.agent_id)) throw badRequest(`${where}: agent_id '${s.agent_id}' is not a UUID`);
  const agentless = s.agent_id === undefined && s.agent_name === undefined;
  if (agentless && mode !== 'collect') throw badRequest(`${where} needs agent_id or agent_name`);
  if (s.summarize && mode !== 'collect') throw badRequest(`${where}: summarize applies to collect steps only`);
  if (s.summarize && agentless) throw badRequest(`${where}: summarize needs agent_id or agent_name (the agent that summarises)`);
  if (s.output_var === 'input') throw badRequest(`${where}: output_var 'input' is reserved for {{input}}`);
  if (s.prompt !== undefined && s.prompt_template !== undefined && s.prompt !== s.prompt_template) {
    throw badRequest(`${where}: give prompt or prompt_template, not both`);
  }
  return {
    name,
    agent_id: s.agent_id?.toLowerCase() ?? null,
    agent_name: s.agent_id === undefined ? (s.agent_name ?? null) : null,
    prompt: s.prompt ?? s.prompt_template ?? '{{input}}',
    mode,
    timeout_secs: s.timeout_secs ?? null,
    error_mode: s.error_mode ?? 'fail',
    max_retries: s.max_retries ?? DEFAULT_MAX_RETRIES,
    backoff_ms: s.backoff_ms ?? null,
    output_var: s.output_var ?? null,
    condition: s.condition ?? '',
    max_iterations: s.max_iterations ?? DEFAULT_MAX_ITERATIONS,
    until: s.until ?? '',
    session_mode: (s.session_mode ?? null) as SessionMode | null,
    summarize: s.summarize ?? false,
    depends_on: s.depends_on ?? [],
  };
}

/** A definition as the API shows it: the effective timeout of each step. */
export function viewSteps(steps: readonly Step[], defaultTimeout: number): Array<Step & { timeout_secs: number }> {
  return steps.map((s) => ({ ...s, timeout_secs: s.timeout_secs ?? defaultTimeout }));
}

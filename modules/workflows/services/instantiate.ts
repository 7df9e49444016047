/**
 * Templates and workflows, both ways. Instantiating fills the parameters into the prompts at once (one pass; a value
 * that itself holds a {{placeholder}} becomes prompt text like any other, which the run expands), gives each step the agent it names or the one chosen for the template (else the agent
 * named "default", as the reference does), and keeps each step's output under its name (output_var), so templates
 * written as sequences and as graphs both read earlier outputs as {{step name}}. Saving a workflow as a template
 * makes a parameter of every placeholder that is not {{input}} or an output of one of its steps.
 */
import { badRequest, isUuid } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry } from '@talon/agents';
import { normalizeSteps, type Definition, type Step, type StepInput } from './definition.ts';
import { fits, TEMPLATE_ID, type TemplateParameter, type TemplateStep, type WorkflowTemplate } from './template-format.ts';
import { placeholders, render } from './template.ts';

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const DEFAULT_AGENT = 'default';

export interface Instantiation {
  /** The agent (name or UUID) of the steps that name none. */
  agent?: string;
  /** The workflow's name; default: the template's. */
  name?: string;
  maxSteps: number;
}

/** The workflow a template makes with these parameter values; 400 naming a missing, unknown or mistyped parameter. */
export function instantiate(t: WorkflowTemplate, params: Record<string, unknown>, options: Instantiation, agents: AgentRegistry): Definition {
  const values = parameterValues(t, params, agents);
  const steps = t.steps.map((s) => stepOf(s, values, options.agent ?? DEFAULT_AGENT, agents));
  try {
    return { name: options.name ?? t.name, description: t.description, steps: normalizeSteps(steps, options.maxSteps), total_timeout_secs: null };
  } catch (err) {
    throw badRequest(`template '${t.id}' makes an invalid workflow: ${(err as Error).message}`);
  }
}

function parameterValues(t: WorkflowTemplate, params: Record<string, unknown>, agents: AgentRegistry): Map<string, string> {
  const declared = new Map(t.parameters.map((p) => [p.name, p]));
  for (const key of Object.keys(params))
    if (!declared.has(key))
      throw badRequest(`unknown parameter '${key}': template '${t.id}' takes ${t.parameters.map((p) => `'${p.name}'`).join(', ') || 'no parameters'}`);
  const values = new Map<string, string>();
  for (const p of t.parameters) {
    const value = params[p.name] ?? p.default;
    if (value === null || value === undefined) {
      if (p.required) throw badRequest(`missing required parameter: ${p.name}`);
      values.set(p.name, '');
      continue;
    }
    if (!fits(p.param_type, value)) throw badRequest(`parameter '${p.name}' must be ${article(p.param_type)} (got ${JSON.stringify(value)})`);
    if (p.param_type === 'agent_id' && !agentOf(String(value), agents))
      throw badRequest(`parameter '${p.name}': no agent has the id or name '${String(value)}'`);
    values.set(p.name, String(value));
  }
  return values;
}

function stepOf(s: TemplateStep, values: ReadonlyMap<string, string>, defaultAgent: string, agents: AgentRegistry): StepInput {
  const { agent, prompt_template, output_var, ...rest } = s;
  const who = agent ?? defaultAgent;
  if (!agentOf(who, agents))
    throw badRequest(
      agent === undefined
        ? `step '${s.name}' runs on the agent chosen for the template: no agent has the id or name '${who}' (choose one with ?agent=<name or id>)`
        : `step '${s.name}' names the agent '${who}', which does not exist`,
    );
  return {
    ...rest,
    ...(isUuid(who) ? { agent_id: who } : { agent_name: who }),
    prompt: render(prompt_template, values),
    output_var: output_var ?? (VARIABLE.test(s.name) && s.name !== 'input' ? s.name : undefined),
  };
}

function agentOf(ref: string, agents: AgentRegistry): AgentRecord | undefined {
  return isUuid(ref) ? agents.get(ref.toLowerCase()) : agents.findByName(ref);
}

const article = (type: string) => (type === 'agent_id' ? 'an agent id or name' : `a ${type}`);

export interface TemplateFields {
  id?: string;
  name?: string;
  description?: string;
  category?: string | null;
  tags?: string[];
}

/** A template of a workflow (id: the slug of its name unless given), keeping what each step sets apart from the defaults. */
export function templateOf(wf: Definition, fields: TemplateFields): WorkflowTemplate {
  const name = fields.name ?? wf.name;
  const id = fields.id ?? slug(name);
  if (!new RegExp(TEMPLATE_ID).test(id)) throw badRequest(`the name '${name}' makes no template id: give an id (lower-case letters, digits, '-', '_')`);
  return {
    id,
    name,
    description: fields.description ?? wf.description,
    category: fields.category ?? null,
    tags: fields.tags ?? [],
    parameters: parametersOf(wf.steps),
    steps: wf.steps.map(templateStep),
    created_at: new Date().toISOString(),
    i18n: {},
    source: 'user',
  };
}

function parametersOf(steps: readonly Step[]): TemplateParameter[] {
  const produced = new Set(['input', ...steps.map((s) => s.name), ...steps.flatMap((s) => (s.output_var ? [s.output_var] : []))]);
  const found = new Map<string, TemplateParameter>();
  for (const step of steps)
    for (const name of placeholders(step.prompt))
      if (!produced.has(name) && !found.has(name))
        found.set(name, { name, description: `used in step '${step.name}'`, param_type: 'string', default: null, required: true });
  return [...found.values()];
}

function templateStep(s: Step): TemplateStep {
  return {
    name: s.name,
    prompt_template: s.prompt,
    ...((s.agent_name ?? s.agent_id) !== null && { agent: (s.agent_name ?? s.agent_id)! }),
    ...(s.depends_on.length > 0 && { depends_on: s.depends_on }),
    ...(s.mode !== 'sequential' && { mode: s.mode }),
    ...(s.mode === 'conditional' && { condition: s.condition }),
    ...(s.mode === 'loop' && { max_iterations: s.max_iterations, until: s.until }),
    ...(s.error_mode !== 'fail' && { error_mode: s.error_mode }),
    ...(s.error_mode === 'retry' && { max_retries: s.max_retries }),
    ...(s.backoff_ms !== null && { backoff_ms: s.backoff_ms }),
    ...(s.timeout_secs !== null && { timeout_secs: s.timeout_secs }),
    ...(s.output_var !== null && s.output_var !== s.name && { output_var: s.output_var }),
    ...(s.session_mode !== null && { session_mode: s.session_mode }),
    ...(s.summarize && { summarize: true }),
  };
}

/** Lower-case letters and digits, other runs of characters as one '-', at most 64 characters. */
export function slug(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 64)
    .replace(/^-+|-+$/g, '');
}

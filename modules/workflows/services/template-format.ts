/**
 * Workflow templates: the reference registry's `workflows/<id>.toml` format — id, name, description, category, tags,
 * [[parameters]] (name, description, param_type string|number|boolean|agent_id, default, required) and [[steps]]
 * (name, prompt_template with {{parameter}} placeholders, agent, depends_on) — plus, on a step, the workflow step
 * fields a template saved from a workflow keeps (mode, error_mode, output_var...). Keys the format does not know are
 * ignored, as the reference does: registries add fields over time.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { parse as parseToml } from 'smol-toml';
import type { FromSchema } from '@talon/module-sdk';
import { stepSchema, type Mode } from './definition.ts';
import { checkGraph, isGraph } from './graph.ts';

export const PARAM_TYPES = ['string', 'number', 'boolean', 'agent_id'] as const;
export const TEMPLATE_ID = '^[a-z0-9][a-z0-9_-]{0,63}$';

const { mode, condition, max_iterations, until, error_mode, max_retries, backoff_ms, timeout_secs, output_var, session_mode, summarize, depends_on } =
  stepSchema.properties;

export const templateParameterSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 64 },
    description: { type: 'string', maxLength: 4096 },
    param_type: { type: 'string', enum: PARAM_TYPES },
    default: { type: ['string', 'number', 'boolean'] },
    required: { type: 'boolean' },
  },
  required: ['name', 'param_type'],
} as const;

export const templateStepSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 128 },
    prompt_template: { type: 'string', maxLength: 100000 },
    agent: { type: 'string', minLength: 1, maxLength: 128, description: 'agent name or UUID; none: the agent chosen when instantiating' },
    depends_on,
    mode,
    condition,
    max_iterations,
    until,
    error_mode,
    max_retries,
    backoff_ms,
    timeout_secs,
    output_var,
    session_mode,
    summarize,
  },
  required: ['name', 'prompt_template'],
} as const;

export const templateSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: TEMPLATE_ID },
    name: { type: 'string', minLength: 1, maxLength: 256 },
    description: { type: 'string', maxLength: 4096 },
    category: { type: ['string', 'null'], maxLength: 64 },
    tags: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 50 },
    parameters: { type: 'array', items: templateParameterSchema, maxItems: 100 },
    steps: { type: 'array', items: templateStepSchema, minItems: 1, maxItems: 1000 },
    created_at: { type: ['string', 'null'] },
    i18n: {
      type: 'object',
      additionalProperties: { type: 'object', properties: { name: { type: 'string' }, description: { type: 'string' } } },
    },
  },
  required: ['id', 'name', 'steps'],
} as const;

export type TemplateFile = FromSchema<typeof templateSchema>;
export type TemplateStep = FromSchema<typeof templateStepSchema>;
export type ParamType = (typeof PARAM_TYPES)[number];

export interface TemplateParameter {
  name: string;
  description: string;
  param_type: ParamType;
  default: string | number | boolean | null;
  required: boolean;
}

/** A template as the API shows it: every field present, and where it comes from ('user' or 'registry:<name>'). */
export interface WorkflowTemplate {
  id: string;
  name: string;
  description: string;
  category: string | null;
  tags: string[];
  parameters: TemplateParameter[];
  steps: TemplateStep[];
  created_at: string | null;
  i18n: Record<string, { name?: string; description?: string }>;
  source: string;
}

/** Reads templates: TOML text or parsed data, validated against the format (the validator is compiled on first use). */
export class TemplateReader {
  private validator?: ValidateFunction<TemplateFile>;

  fromToml(text: string, source: string): WorkflowTemplate {
    let data: unknown;
    try {
      data = parseToml(text);
    } catch (err) {
      throw new Error(`not valid TOML: ${(err as Error).message.split('\n')[0]}`);
    }
    return this.fromData(data, source);
  }

  /** Throws an Error naming the field that is wrong. */
  fromData(data: unknown, source: string): WorkflowTemplate {
    // TOML dates become ISO text, as JSON has them.
    const plain = JSON.parse(JSON.stringify(data)) as unknown;
    this.validator ??= new Ajv({ allErrors: true, strict: false }).compile<TemplateFile>(templateSchema);
    if (!this.validator(plain)) {
      const problems = (this.validator.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
      throw new Error(problems.join('; '));
    }
    return complete(plain, source);
  }
}

function complete(file: TemplateFile, source: string): WorkflowTemplate {
  const parameters = (file.parameters ?? []).map((p) => ({
    name: p.name,
    description: p.description ?? '',
    param_type: p.param_type,
    default: p.default ?? null,
    required: p.required ?? false,
  }));
  const seen = new Set<string>();
  for (const p of parameters) {
    if (seen.has(p.name)) throw new Error(`parameter '${p.name}' is declared twice`);
    seen.add(p.name);
    if (p.default !== null && !fits(p.param_type, p.default)) throw new Error(`parameter '${p.name}': its default is not a ${p.param_type}`);
  }
  const steps = file.steps.map((s) => ({ ...s, depends_on: s.depends_on ?? [] }));
  if (isGraph(steps))
    checkGraph(
      steps.map((s) => ({ name: s.name, mode: modeName(s.mode), depends_on: s.depends_on, prompt: s.prompt_template, output_var: s.output_var ?? s.name })),
    );
  return {
    id: file.id,
    name: file.name,
    description: file.description ?? '',
    category: file.category ?? null,
    tags: file.tags ?? [],
    parameters,
    steps,
    created_at: file.created_at ?? null,
    i18n: file.i18n ?? {},
    source,
  };
}

/** Whether a value has a parameter's type (an agent_id is text; the agent's existence is checked when instantiating). */
export function fits(type: ParamType, value: unknown): boolean {
  if (type === 'number') return typeof value === 'number' && Number.isFinite(value);
  if (type === 'boolean') return typeof value === 'boolean';
  return typeof value === 'string';
}

function modeName(mode: TemplateStep['mode']): Mode {
  return typeof mode === 'object' ? (Object.keys(mode)[0] as Mode) : (mode ?? 'sequential');
}

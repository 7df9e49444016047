/**
 * HAND.toml → HandDefinition, in the reference registry's format: id, name, description, category, icon, tags,
 * tools, skills, mcp_servers, allowed_plugins, [[requires]], [[settings]], one `[agent]` or several
 * `[agents.<role>]` (model keys on the role or in its `.model` table), [dashboard] metrics, [metadata], [routing].
 * Talon adds [[schedules]] and [[triggers]] (background work registered at activation). Problems are
 * DefinitionErrors naming the key.
 */
import { parse } from 'smol-toml';
import type { HandAgentSpec, HandDefinition, HandRequirement, HandSchedule, HandSetting, HandTrigger, RequirementType } from '@talon/hands';
import { DefinitionError, bool, isTable, num, scalarText, str, strings, table, tables, type Table } from './toml-read.ts';

export const HAND_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const ROLE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const SETTING_TYPES = new Set(['select', 'toggle', 'text']);
const REQUIREMENT_TYPES = new Set<RequirementType>(['binary', 'env_var', 'api_key', 'any_env_var']);

export function parseHand(text: string, skillFiles: Record<string, string>, source: HandDefinition['source'], path: string): HandDefinition {
  let doc: Table;
  try {
    doc = parse(text) as Table;
  } catch (err) {
    throw new DefinitionError(`HAND.toml does not parse: ${(err as Error).message.split('\n')[0]}`);
  }
  const id = str(doc.id, 'id');
  if (!HAND_ID.test(id)) throw new DefinitionError(`'id' is missing or not lower-case letters, digits, '_' and '-' (at most 64): '${id}'`);
  const agents = parseAgents(doc);
  const roles = new Set(agents.map((a) => a.role));
  const routing = table(doc.routing, 'routing');
  return {
    id,
    version: str(doc.version, 'version', '0.1.0'),
    name: str(doc.name, 'name', id),
    description: str(doc.description, 'description'),
    category: str(doc.category, 'category', 'productivity'),
    icon: str(doc.icon, 'icon'),
    tags: strings(doc.tags, 'tags'),
    tools: strings(doc.tools, 'tools'),
    skills: strings(doc.skills, 'skills'),
    mcp_servers: strings(doc.mcp_servers, 'mcp_servers'),
    allowed_plugins: strings(doc.allowed_plugins, 'allowed_plugins'),
    requirements: tables(doc.requires, 'requires').map(parseRequirement),
    settings: parseSettings(doc.settings),
    agents,
    schedules: tables(doc.schedules, 'schedules').map((s, i) => parseSchedule(s, i, roles, agents[0].role)),
    triggers: tables(doc.triggers, 'triggers').map((t, i) => parseTrigger(t, i, roles, agents[0].role)),
    metrics: tables(table(doc.dashboard, 'dashboard').metrics, 'dashboard.metrics').map((m, i) => ({
      label: str(m.label, `dashboard.metrics[${i}].label`),
      memory_key: str(m.memory_key, `dashboard.metrics[${i}].memory_key`),
      format: str(m.format, `dashboard.metrics[${i}].format`, 'number'),
    })),
    metadata: table(doc.metadata, 'metadata'),
    routing: { aliases: strings(routing.aliases, 'routing.aliases'), weak_aliases: strings(routing.weak_aliases, 'routing.weak_aliases') },
    skill_files: skillFiles,
    source,
    path,
  };
}

/** `[agent]` is the single role 'main'; `[agents.<role>]` are several. The coordinator comes first. */
function parseAgents(doc: Table): HandAgentSpec[] {
  const many = table(doc.agents, 'agents');
  const entries: Array<[string, Table]> = Object.entries(many).map(([role, t]) => [role, table(t, `agents.${role}`)]);
  if (doc.agent !== undefined) entries.unshift(['main', table(doc.agent, 'agent')]);
  if (!entries.length) throw new DefinitionError('a hand needs an [agent] table or at least one [agents.<role>] table');
  const specs = entries.map(([role, t]) => parseAgent(role, t));
  if (!specs.some((s) => s.coordinator)) specs[0].coordinator = true;
  else if (specs.filter((s) => s.coordinator).length > 1) throw new DefinitionError('more than one agent role says coordinator = true');
  return [...specs.filter((s) => s.coordinator), ...specs.filter((s) => !s.coordinator)];
}

function parseAgent(role: string, t: Table): HandAgentSpec {
  if (!ROLE.test(role)) throw new DefinitionError(`agent role '${role}' must be letters, digits, '_' and '-' (at most 64)`);
  const k = (key: string) => `agents.${role}.${key}`;
  // Model keys may sit on the role table (`model` is then the model's name) or in its [model] table (which wins).
  const nested = isTable(t.model) ? t.model : {};
  const model: Table = { ...t, ...(isTable(t.model) ? { model: undefined } : {}), ...nested };
  const caps = table(t.capabilities, k('capabilities'));
  const resources = table(t.resources, k('resources'));
  const spec: HandAgentSpec = {
    role,
    coordinator: bool(t.coordinator, k('coordinator')),
    description: str(t.description, k('description')),
    provider: str(model.provider, k('provider'), 'default'),
    model: str(model.model, k('model'), 'default'),
    system_prompt: str(model.system_prompt, k('system_prompt')),
    tool_blocklist: strings(t.tool_blocklist, k('tool_blocklist')),
    capabilities: {
      network: strings(caps.network, k('capabilities.network')),
      memory_read: strings(caps.memory_read, k('capabilities.memory_read')),
      memory_write: strings(caps.memory_write, k('capabilities.memory_write')),
      shell: strings(caps.shell, k('capabilities.shell')),
    },
  };
  const optional: Array<[keyof HandAgentSpec, number | undefined]> = [
    ['max_tokens', num(model.max_tokens, k('max_tokens'))],
    ['temperature', num(model.temperature, k('temperature'))],
    ['max_iterations', num(t.max_iterations ?? model.max_iterations, k('max_iterations'))],
    ['max_llm_tokens_per_hour', num(resources.max_llm_tokens_per_hour ?? caps.max_llm_tokens_per_hour, k('resources.max_llm_tokens_per_hour'))],
  ];
  for (const [key, value] of optional) if (value !== undefined) Object.assign(spec, { [key]: value });
  if (t.skills !== undefined) spec.skills = strings(t.skills, k('skills'));
  if (t.mcp_servers !== undefined) spec.mcp_servers = strings(t.mcp_servers, k('mcp_servers'));
  return spec;
}

function parseRequirement(r: Table, i: number): HandRequirement {
  const k = (key: string) => `requires[${i}].${key}`;
  const type = str(r.requirement_type, k('requirement_type'), 'binary') as RequirementType;
  if (!REQUIREMENT_TYPES.has(type)) throw new DefinitionError(`'${k('requirement_type')}' must be one of ${[...REQUIREMENT_TYPES].join(', ')}`);
  const check = str(r.check_value, k('check_value'), str(r.key, k('key')));
  if (!check) throw new DefinitionError(`'${k('check_value')}' is required`);
  return {
    key: str(r.key, k('key'), check),
    label: str(r.label, k('label'), check),
    requirement_type: type,
    check_value: check,
    optional: bool(r.optional, k('optional')),
    description: str(r.description, k('description')),
    install: table(r.install, k('install')),
  };
}

function parseSettings(v: unknown): HandSetting[] {
  const seen = new Set<string>();
  return tables(v, 'settings').map((s, i) => {
    const k = (key: string) => `settings[${i}].${key}`;
    const key = str(s.key, k('key'));
    if (!key) throw new DefinitionError(`'${k('key')}' is required`);
    if (seen.has(key)) throw new DefinitionError(`setting '${key}' is declared twice`);
    seen.add(key);
    const type = str(s.setting_type, k('setting_type'), 'text');
    if (!SETTING_TYPES.has(type)) throw new DefinitionError(`'${k('setting_type')}' must be select, toggle or text`);
    const options = tables(s.options, k('options')).map((o, j) => {
      const option = { value: scalarText(o.value, `${k('options')}[${j}].value`), label: str(o.label, `${k('options')}[${j}].label`) };
      const extra = { provider_env: str(o.provider_env, `${k('options')}[${j}].provider_env`), binary: str(o.binary, `${k('options')}[${j}].binary`) };
      return {
        ...option,
        label: option.label || option.value,
        ...(extra.provider_env && { provider_env: extra.provider_env }),
        ...(extra.binary && { binary: extra.binary }),
      };
    });
    if (type === 'select' && !options.length) throw new DefinitionError(`select setting '${key}' has no [[settings.options]]`);
    const fallback = type === 'toggle' ? 'false' : type === 'select' ? options[0].value : '';
    return {
      key,
      label: str(s.label, k('label'), key),
      description: str(s.description, k('description')),
      setting_type: type as HandSetting['setting_type'],
      default: scalarText(s.default, k('default'), fallback),
      options,
    };
  });
}

function roleOf(t: Table, key: string, roles: Set<string>, fallback: string): string {
  const role = str(t.role, key, fallback);
  if (!roles.has(role)) throw new DefinitionError(`'${key}' names role '${role}', which the hand does not define`);
  return role;
}

function parseSchedule(s: Table, i: number, roles: Set<string>, coordinator: string): HandSchedule {
  const k = (key: string) => `schedules[${i}].${key}`;
  const schedule = str(s.cron ?? s.schedule, k('cron'));
  const prompt = str(s.prompt, k('prompt'));
  if (!schedule) throw new DefinitionError(`'${k('cron')}' is required (a cron expression, "every 5m" or "at <time>")`);
  if (!prompt) throw new DefinitionError(`'${k('prompt')}' is required`);
  const tz = str(s.tz, k('tz'));
  return { role: roleOf(s, k('role'), roles, coordinator), name: str(s.name, k('name'), `schedule ${i + 1}`), schedule, prompt, ...(tz && { tz }) };
}

function parseTrigger(t: Table, i: number, roles: Set<string>, coordinator: string): HandTrigger {
  const k = (key: string) => `triggers[${i}].${key}`;
  if (t.pattern === undefined || !(typeof t.pattern === 'string' || isTable(t.pattern)))
    throw new DefinitionError(`'${k('pattern')}' must be a pattern name or table`);
  const template = str(t.prompt_template ?? t.prompt, k('prompt_template'));
  if (!template) throw new DefinitionError(`'${k('prompt_template')}' is required`);
  const maxFires = num(t.max_fires, k('max_fires')) ?? 0;
  return { role: roleOf(t, k('role'), roles, coordinator), pattern: t.pattern, prompt_template: template, max_fires: maxFires };
}

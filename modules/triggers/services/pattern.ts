/**
 * Trigger patterns: what they match on the event bus and what their cooldown is keyed on (the subject: the agent,
 * the task, the memory key — so a trigger cooling down after task A still fires for task B). A pattern is an object
 * with one key (`{lifecycle: {}}`); field-less patterns may also be a bare string (`"all"`) or `{x: null}`.
 * Globs (name_pattern, key_pattern, type): `*` is any run of characters, `?` one character, case-insensitive;
 * anything else is literal, and a glob without wildcards must match the whole text.
 */
import { badRequest } from '@talon/module-sdk';
import type { KnownEvent } from './known.ts';

export type Pattern = Record<string, Record<string, string>>;

export interface Owner {
  id: string;
  name: string | undefined;
}

/** What a matcher may ask about the trigger and the event. */
export interface MatchContext {
  owner: Owner;
  /** The event's one-line description (computed once per event, when first asked). */
  description(): string;
}

/** A compiled pattern: the event types it can match ('*' for any) and the matcher (the subject, or undefined). */
export interface Matcher {
  types: readonly (KnownEvent['type'] | '*')[];
  match(event: KnownEvent, ctx: MatchContext): string | undefined;
}

interface Kind {
  fields: Record<string, { default?: string; allowed?: readonly string[] }>;
  compile(fields: Record<string, string>): Matcher;
}

const LIFECYCLE: KnownEvent['type'][] = ['agent.spawned', 'agent.terminated', 'agent.crashed'];

const KINDS: Record<string, Kind> = {
  all: { fields: {}, compile: () => ({ types: ['*'], match: (e) => principal(e) }) },
  lifecycle: { fields: {}, compile: () => ({ types: LIFECYCLE, match: (e) => agentOf(e) }) },
  agent_spawned: {
    fields: { name_pattern: { default: '*' } },
    compile: (f) => {
      const name = glob(f.name_pattern);
      return { types: ['agent.spawned'], match: (e) => (e.type === 'agent.spawned' && name.test(e.data.name) ? e.data.agentId : undefined) };
    },
  },
  agent_terminated: { fields: {}, compile: () => ({ types: ['agent.terminated', 'agent.crashed'], match: (e) => agentOf(e) }) },
  task_posted: {
    fields: { assignee_match: { default: 'any' } },
    compile: (f) => ({
      types: ['task.posted'],
      match: (e, ctx) => (e.type === 'task.posted' && assigneeMatches(f.assignee_match, e.data.assignedTo, ctx.owner) ? e.data.taskId : undefined),
    }),
  },
  task_claimed: { fields: {}, compile: () => ({ types: ['task.claimed'], match: (e) => (e.type === 'task.claimed' ? e.data.taskId : undefined) }) },
  task_completed: { fields: {}, compile: () => ({ types: ['task.completed'], match: (e) => (e.type === 'task.completed' ? e.data.taskId : undefined) }) },
  memory_update: {
    fields: { key_pattern: { default: '*' } },
    compile: (f) => {
      const key = glob(f.key_pattern);
      return {
        types: ['memory.updated'],
        match: (e) =>
          e.type === 'memory.updated' && key.test(e.data.key ?? e.data.memoryId ?? '') ? `${e.data.agentId}:${e.data.key ?? e.data.memoryId}` : undefined,
      };
    },
  },
  custom: {
    fields: { event_type: { default: '*' } },
    compile: (f) => {
      const type = glob(f.event_type);
      return { types: ['custom'], match: (e) => (e.type === 'custom' && type.test(e.data.type) ? e.data.type : undefined) };
    },
  },
  event: {
    fields: { type: {} },
    compile: (f) => {
      const type = glob(f.type);
      return { types: ['*'], match: (e) => (type.test(e.type) ? principal(e) : undefined) };
    },
  },
  content_match: {
    fields: { substring: {} },
    compile: (f) => {
      const needle = f.substring.toLowerCase();
      return { types: ['*'], match: (_e, ctx) => (ctx.description().toLowerCase().includes(needle) ? '' : undefined) };
    },
  },
};

/** Reference spellings accepted on input. */
const ALIASES: Record<string, string> = { memory_key_pattern: 'memory_update' };

export const PATTERN_KINDS = Object.keys(KINDS);

/** The stored form of a pattern sent by a client: 400 naming the problem. */
export function normalizePattern(sent: unknown): Pattern {
  const input = typeof sent === 'string' ? fromText(sent) : sent;
  let kind: string;
  let value: unknown;
  if (typeof input === 'string') [kind, value] = [input, {}];
  else if (input && typeof input === 'object' && !Array.isArray(input) && Object.keys(input).length === 1) [[kind, value]] = Object.entries(input);
  else throw badRequest(`pattern must be an object with one key (one of ${PATTERN_KINDS.join(', ')}) or such a name as a string`);
  kind = ALIASES[kind] ?? kind;
  const spec = KINDS[kind];
  if (!spec) throw badRequest(`unknown pattern '${kind}'; use one of ${PATTERN_KINDS.join(', ')}`);
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) throw badRequest(`pattern '${kind}' takes an object of fields`);
  const given = (value ?? {}) as Record<string, unknown>;
  const fields: Record<string, string> = {};
  for (const key of Object.keys(given)) if (!(key in spec.fields)) throw badRequest(`pattern '${kind}' has no field '${key}'`);
  for (const [key, rule] of Object.entries(spec.fields)) {
    const v = given[key] ?? rule.default;
    if (typeof v !== 'string' || !v) throw badRequest(`pattern '${kind}' needs '${key}' (a non-empty string)`);
    fields[key] = v;
  }
  return { [kind]: fields };
}

/**
 * A pattern sent as text: a name, or the pattern object written as JSON (a form field). Text that starts like JSON
 * and does not parse is reported as malformed JSON, with where, rather than as an unknown pattern name.
 */
function fromText(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{"]/.test(trimmed)) return trimmed;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch (err) {
    throw badRequest(
      `pattern is not valid JSON (${(err as Error).message}): send an object with one key, such as {"lifecycle": {}} or ` +
        `{"task_posted": {"assignee_match": "self"}}, or a pattern name (one of ${PATTERN_KINDS.join(', ')})`,
    );
  }
}

export function compile(pattern: Pattern): Matcher {
  const [[kind, fields]] = Object.entries(pattern);
  return KINDS[kind].compile(fields);
}

/** `*` and `?` wildcards, case-insensitive, whole text. */
export function glob(pattern: string): RegExp {
  const body = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'is');
}

/**
 * assignee_match: 'any' (every task), 'self' (assigned to the trigger's agent by UUID or name), 'unassigned', or an
 * agent UUID or name.
 */
function assigneeMatches(rule: string, assignee: string | undefined, owner: Owner): boolean {
  const r = rule.toLowerCase();
  if (r === 'any') return true;
  if (r === 'unassigned') return !assignee;
  if (!assignee) return false;
  const a = assignee.toLowerCase();
  if (r === 'self') return a === owner.id || (owner.name !== undefined && a === owner.name.toLowerCase());
  return a === r;
}

function agentOf(e: KnownEvent): string | undefined {
  return e.type === 'agent.spawned' || e.type === 'agent.terminated' || e.type === 'agent.crashed' ? e.data.agentId : undefined;
}

/** What an event is about, for cooldowns of catch-all patterns. */
function principal(e: KnownEvent): string {
  const d = e.data as { agentId?: string; taskId?: string; jobId?: string; runId?: string; key?: string; type?: string };
  return `${e.type}:${d.taskId ?? d.runId ?? d.jobId ?? d.key ?? d.agentId ?? d.type ?? ''}`;
}

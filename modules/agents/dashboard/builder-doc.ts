/**
 * The agent builder's model: the manifest as a parsed TOML document. The fields read and write their keys in it and
 * nothing else, so every key the form does not show stays as it was: fields → TOML → fields keeps everything (the
 * TOML view is the same document, stringified; comments are not kept, keys and values are).
 */
import { parse, stringify } from 'smol-toml';

export type Doc = Record<string, unknown>;

/** Each field and its key path in the manifest (docs/agents.md). */
export const FIELDS = {
  name: ['name'],
  description: ['description'],
  system_prompt: ['model', 'system_prompt'],
  provider: ['model', 'provider'],
  model: ['model', 'model'],
  tools: ['capabilities', 'tools'],
  skills: ['skills'],
  mcp_servers: ['mcp_servers'],
  memory_read: ['capabilities', 'memory_read'],
  memory_write: ['capabilities', 'memory_write'],
  tokens_per_hour: ['resources', 'max_llm_tokens_per_hour'],
  max_tokens: ['model', 'max_tokens'],
  max_iterations: ['autonomous', 'max_iterations'],
} as const;

export type Field = keyof typeof FIELDS;

/** The field a problem of the service is about ('capabilities.tools' → tools); undefined for the manifest as a whole. */
export function fieldOf(path: string): Field | undefined {
  if (path === 'model.name') return 'model';
  // The spec's place of the hourly cap; the builder writes the reference's [resources].
  if (path === 'capabilities.max_llm_tokens_per_hour') return 'tokens_per_hour';
  return (Object.keys(FIELDS) as Field[]).find((f) => FIELDS[f].join('.') === path);
}

export function read(doc: Doc, field: Field): unknown {
  let at: unknown = doc;
  for (const key of FIELDS[field]) at = at && typeof at === 'object' && !Array.isArray(at) ? (at as Doc)[key] : undefined;
  // The reference's alias of model.model.
  if (field === 'model' && at === undefined && doc.model && typeof doc.model === 'object') return (doc.model as Doc).name;
  return at;
}

export const text = (doc: Doc, field: Field): string => {
  const v = read(doc, field);
  return typeof v === 'string' || typeof v === 'number' ? String(v) : '';
};

/** A list key: a lone string counts as a one-item list, as the service reads it. */
export const names = (doc: Doc, field: Field): string[] => {
  const v = read(doc, field);
  if (typeof v === 'string') return [v];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
};

/** A copy with the field set; undefined removes the key (a table left empty goes too, so nothing is added by a look). */
export function write(doc: Doc, field: Field, value: unknown): Doc {
  const path = FIELDS[field];
  const next: Doc = { ...doc };
  let at = next;
  for (const key of path.slice(0, -1)) {
    const child = at[key];
    at[key] = child && typeof child === 'object' && !Array.isArray(child) ? { ...(child as Doc) } : {};
    at = at[key] as Doc;
  }
  const last = path[path.length - 1]!;
  if (value === undefined) delete at[last];
  else at[last] = value;
  // The reference's alias of model.model: one key says which model.
  if (field === 'model') delete at.name;
  if (path.length > 1 && Object.keys(at).length === 0) delete next[path[0]!];
  return next;
}

/** A number field: '' removes the key, anything else must be a whole number. */
export function writeNumber(doc: Doc, field: Field, raw: string): Doc {
  const t = raw.trim();
  return write(doc, field, t === '' ? undefined : Number.isInteger(Number(t)) ? Number(t) : t);
}

export function toToml(doc: Doc): string {
  return stringify(doc);
}

export function fromToml(toml: string): Doc {
  return parse(toml) as Doc;
}

export const csv = (list: string[]) => list.join(', ');
export const fromCsv = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

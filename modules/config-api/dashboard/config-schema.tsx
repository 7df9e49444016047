/** Turns GET /api/config/schema into form fields, and field text back into the JSON value POST /api/config/set takes. */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
}

export type FieldKind = 'boolean' | 'enum' | 'number' | 'integer' | 'string' | 'secret' | 'list' | 'json';

export interface Field {
  path: string;
  key: string;
  kind: FieldKind;
  schema: JsonSchema;
}

export interface Section {
  path: string;
  title: string;
  description?: string;
  fields: Field[];
}

/** The same rule the service uses to redact: a key named like a credential holds a secret. */
const SECRET_KEY = /(^|_)(api_key|apikey|key|secret|token|password|pass|passphrase|credentials?)$/i;

const typeOf = (s: JsonSchema) => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type);

function kindOf(key: string, s: JsonSchema): FieldKind {
  const type = typeOf(s);
  if (s.enum) return 'enum';
  if (type === 'boolean') return 'boolean';
  if (type === 'integer' || type === 'number') return type;
  if (type === 'string') return SECRET_KEY.test(key) ? 'secret' : 'string';
  if (type === 'array' && typeOf(s.items ?? {}) === 'string') return 'list';
  return 'json';
}

/** One section per object of the schema (nested objects get their own, named by their dotted path). */
export function sectionsOf(schema: JsonSchema): Section[] {
  const out: Section[] = [];
  const walk = (s: JsonSchema, path: string, title: string) => {
    const section: Section = { path, title, description: s.description, fields: [] };
    out.push(section);
    for (const [key, sub] of Object.entries(s.properties ?? {})) {
      const p = path ? `${path}.${key}` : key;
      if (typeOf(sub) === 'object' && sub.properties && Object.keys(sub.properties).length) walk(sub, p, p);
      else section.fields.push({ path: p, key, kind: kindOf(key, sub), schema: sub });
    }
  };
  walk(schema, '', 'General');
  return out.filter((s) => s.fields.length);
}

export function valueAt(config: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), config);
}

/** The text a field shows for a value (secrets show nothing: they are never read back). */
export function toText(kind: FieldKind, value: unknown): string {
  if (kind === 'secret' || value === undefined || value === null) return '';
  if (kind === 'list') return Array.isArray(value) ? value.join(', ') : '';
  if (kind === 'json') return JSON.stringify(value, null, 2);
  return String(value);
}

/** The JSON value for a field's text; throws with a plain message when it is not one. */
export function fromText(field: Field, text: string): unknown {
  switch (field.kind) {
    case 'boolean':
      return text === 'true';
    case 'integer':
    case 'number': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n)) throw new Error(`${field.path} must be a number`);
      return n;
    }
    case 'list':
      return text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    case 'json':
      try {
        return JSON.parse(text);
      } catch {
        throw new Error(`${field.path} must be JSON`);
      }
    default:
      return text;
  }
}

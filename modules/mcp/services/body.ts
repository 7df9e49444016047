/**
 * The bodies of POST and PUT /api/mcp/servers: the raw spec ({name,
 * transport: {type, command}, args, env}, command/args also beside transport)
 * or a catalogue install ({template_id, credentials}). Both become a
 * ServerSpec here; secrets stay in the spec and are sealed by the store.
 */
import { badRequest, notFound, type FromSchema } from '@talon/module-sdk';
import type { Template } from './catalog.ts';
import { checkEnv, checkHeaders, checkName, checkTransport, parseHeaderList, type ServerSpec } from './spec.ts';

const stringMap = {
  anyOf: [
    { type: 'object', additionalProperties: { type: 'string', maxLength: 8192 }, maxProperties: 100 },
    { type: 'array', items: { type: 'string', maxLength: 8192 }, maxItems: 100 },
  ],
} as const;

export const serverBody = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 64 },
    template_id: { type: 'string', minLength: 1, maxLength: 64, description: 'install from the catalogue (GET /api/mcp/catalog)' },
    credentials: {
      type: 'object',
      additionalProperties: { type: 'string', maxLength: 8192 },
      maxProperties: 100,
      description: 'environment variable name → value (stored encrypted, never read back)',
    },
    transport: {
      anyOf: [
        { type: 'string', minLength: 1 },
        {
          type: 'object',
          properties: {
            type: { type: 'string', minLength: 1 },
            command: { type: 'string', minLength: 1, maxLength: 1024 },
            args: { type: 'array', items: { type: 'string', maxLength: 8192 }, maxItems: 200 },
            url: { type: 'string', minLength: 1, maxLength: 2048 },
          },
          required: ['type'],
        },
      ],
    },
    command: { type: 'string', minLength: 1, maxLength: 1024 },
    args: { type: 'array', items: { type: 'string', maxLength: 8192 }, maxItems: 200 },
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    env: { ...stringMap, description: "environment of a stdio server: {NAME: value} or ['NAME=value'] (stored encrypted)" },
    headers: { ...stringMap, description: "headers of an sse/http server: {Name: value} or ['Name: value'] (stored encrypted)" },
    timeout_secs: { type: 'integer', minimum: 1, maximum: 3600 },
  },
  additionalProperties: false,
} as const;

export type ServerBody = FromSchema<typeof serverBody>;

function envMap(value: ServerBody['env']): Record<string, string> {
  if (value === undefined) return {};
  if (!Array.isArray(value)) return checkEnv({ ...value });
  const env: Record<string, string> = {};
  for (const entry of value) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw badRequest(`env entry '${entry}' is not NAME=value`);
    env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return checkEnv(env);
}

function headerMap(value: ServerBody['headers']): Record<string, string> {
  if (value === undefined) return {};
  return Array.isArray(value) ? parseHeaderList(value) : checkHeaders({ ...value });
}

/**
 * The spec a body describes. `previous` is the stored spec on PUT: its env and header values are kept unless the
 * body gives new ones (values are never read back, so a client could not resend them).
 */
export function specFromBody(body: ServerBody, id: string, template: (id: string) => Template | undefined, previous?: ServerSpec): ServerSpec {
  if (body.template_id !== undefined) return fromTemplate(body, id, template, previous);
  if (!body.name) throw badRequest("missing required field 'name' (or 'template_id' to install from the catalogue)");
  if (body.transport === undefined) throw badRequest("missing required field 'transport' ({type: 'stdio', command} or {type: 'http', url})");
  const t = typeof body.transport === 'string' ? { type: body.transport } : body.transport;
  const transport = checkTransport({ type: t.type, command: t.command ?? body.command, args: t.args ?? body.args, url: t.url ?? body.url });
  return {
    id,
    name: checkName(body.name),
    source: 'api',
    transport,
    env: { ...(previous?.env ?? {}), ...envMap(body.env) },
    headers: { ...(previous?.headers ?? {}), ...headerMap(body.headers) },
    timeoutSecs: body.timeout_secs,
  };
}

function fromTemplate(body: ServerBody, id: string, template: (id: string) => Template | undefined, previous?: ServerSpec): ServerSpec {
  const tpl = template(body.template_id!);
  if (!tpl) throw notFound(`MCP catalogue template '${body.template_id}' not found`);
  const env = { ...(previous?.templateId === tpl.id ? previous.env : {}), ...envMap(body.env), ...checkEnv({ ...(body.credentials ?? {}) }) };
  const missing = tpl.required_env.filter((e) => !env[e.name]);
  if (missing.length) {
    const list = missing.map((e) => `${e.name} (${e.label}${e.help ? `: ${e.help}` : ''})`).join('; ');
    throw badRequest(`template '${tpl.id}' needs credentials: ${list}`);
  }
  return {
    id,
    name: checkName(body.name ?? tpl.id),
    source: 'api',
    templateId: tpl.id,
    transport: checkTransport(tpl.transport),
    env,
    headers: { ...(previous?.headers ?? {}), ...headerMap(body.headers) },
    timeoutSecs: body.timeout_secs,
  };
}

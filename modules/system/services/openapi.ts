import type { JsonSchema, RouteInfo } from '@talon/module-sdk';

export interface OpenApiInfo {
  version: string;
  /** Whether a route answers without the bearer token (the auth module's rule; its route option without it). */
  isPublic(route: RouteInfo): boolean;
}

type Operation = Record<string, unknown>;

const PARAM = /:([A-Za-z_$][\w$]*)(\([^)]*\))?/g;

/** Fastify's `/a/:id/b/*` as an OpenAPI path `/a/{id}/b/{wildcard}`, with the parameter names in order. */
export function openApiPath(url: string): { path: string; params: Array<{ name: string; key: string }> } {
  const params: Array<{ name: string; key: string }> = [];
  let path = url.replace(/::/g, '\u0000').replace(PARAM, (_m, name: string) => {
    params.push({ name, key: name });
    return `{${name}}`;
  });
  if (path.endsWith('*')) {
    path = `${path.slice(0, -1)}{wildcard}`;
    params.push({ name: 'wildcard', key: '*' });
  }
  return { path: path.replace(/\u0000/g, ':'), params };
}

const objectProps = (schema: JsonSchema | undefined): { properties: Record<string, JsonSchema>; required: string[] } => {
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = Array.isArray(schema?.required) ? (schema.required as string[]) : [];
  return { properties, required };
};

const ERROR_RESPONSE = { $ref: '#/components/responses/Error' };

function responses(route: RouteInfo): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [code, schema] of Object.entries(route.schema?.response ?? {})) {
    if (!/^([1-5](\d\d|xx)|default)$/i.test(code)) continue;
    const key = code === 'default' ? code : code.toUpperCase();
    // A response entry may itself carry content types (Fastify's long form).
    if (schema && typeof schema === 'object' && 'content' in schema) {
      out[key] = { description: String(schema.description ?? `status ${key}`), content: schema.content };
    } else {
      out[key] = { description: String((schema as JsonSchema).description ?? `status ${key}`), content: { 'application/json': { schema } } };
    }
  }
  if (!Object.keys(out).some((k) => k.startsWith('2') || k === 'default')) {
    out[route.websocket ? '101' : '200'] = { description: route.websocket ? 'switching to the WebSocket protocol' : 'success' };
  }
  out['4XX'] ??= ERROR_RESPONSE;
  out['5XX'] ??= ERROR_RESPONSE;
  return out;
}

function operation(route: RouteInfo, path: string, params: Array<{ name: string; key: string }>, usedIds: Set<string>, info: OpenApiInfo): Operation {
  const schema = route.schema ?? {};
  const parameters: Array<Record<string, unknown>> = [];
  const pathSchema = objectProps(schema.params);
  for (const p of params) {
    parameters.push({ name: p.name, in: 'path', required: true, schema: pathSchema.properties[p.key] ?? { type: 'string' } });
  }
  const query = objectProps(schema.querystring);
  for (const [name, s] of Object.entries(query.properties)) {
    parameters.push({
      name,
      in: 'query',
      required: query.required.includes(name),
      ...(typeof s.description === 'string' ? { description: s.description } : {}),
      schema: s,
    });
  }
  let id = `${route.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;
  while (usedIds.has(id)) id += '_';
  usedIds.add(id);
  const op: Operation = {
    operationId: id,
    summary: schema.summary ?? `${route.method} ${path}`,
    ...(schema.description ? { description: schema.description } : {}),
    tags: schema.tags?.length ? schema.tags : [route.module],
    ...(parameters.length ? { parameters } : {}),
    responses: responses(route),
  };
  if (schema.body) {
    const required = Array.isArray(schema.body.required) && schema.body.required.length > 0;
    op.requestBody = { required, content: { 'application/json': { schema: schema.body } } };
  }
  if (info.isPublic(route)) op.security = [];
  if (route.websocket) op['x-websocket'] = true;
  return op;
}

const METHODS = new Set(['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE']);

/** An OpenAPI 3.1 description of the routes of the current HTTP generation. */
export function buildOpenApi(routes: readonly RouteInfo[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const usedIds = new Set<string>();
  const sorted = [...routes].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method));
  for (const route of sorted) {
    if (!METHODS.has(route.method)) continue;
    // Hidden routes, e.g. the CORS plugin's catch-all OPTIONS route.
    if ((route.schema as { hide?: boolean } | undefined)?.hide) continue;
    const { path, params } = openApiPath(route.url);
    const item = (paths[path] ??= {});
    const method = route.method.toLowerCase();
    if (item[method]) continue;
    item[method] = operation(route, path, params, usedIds, info);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Talon API',
      version: info.version,
      description: 'Agent runtime service. Every /api endpoint but the public ones needs `Authorization: Bearer <api_key>` when an api_key is configured.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] },
      },
      responses: {
        Error: { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    },
    security: [{ bearer: [] }],
  };
}

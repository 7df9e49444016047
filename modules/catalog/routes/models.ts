/** /api/models: listing, lookup (ids may contain slashes), aliases, custom models. */
import type { FromSchema } from 'json-schema-to-ts';
import { notFound, type Routes } from '@talon/module-sdk';
import type { ModelEntry } from '../api.ts';
import type { CatalogStore } from '../services/store.ts';
import { aliasListResponse, aliasRemovedResponse, modelRemovedResponse, aliasResponse, modelListResponse, modelResponse } from './responses.ts';
import { modelIdSchema, modelOptionalProperties, providerIdSchema, TIERS } from '../services/schema.ts';

const listQuery = {
  type: 'object',
  properties: {
    provider: { type: 'string', maxLength: 64 },
    tier: { type: 'string', enum: TIERS },
  },
  additionalProperties: false,
} as const;

const idParams = { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'] } as const;
const wildParams = { type: 'object', properties: { '*': { type: 'string', minLength: 1 } }, required: ['*'] } as const;
const aliasParams = { type: 'object', properties: { alias: { type: 'string', minLength: 1 } }, required: ['alias'] } as const;

const aliasBody = {
  type: 'object',
  properties: { alias: modelIdSchema, model_id: modelIdSchema },
  required: ['alias', 'model_id'],
  additionalProperties: false,
} as const;

const customBody = {
  type: 'object',
  properties: {
    id: modelIdSchema,
    provider: providerIdSchema,
    display_name: { type: 'string', minLength: 1, maxLength: 200 },
    context_window: { type: 'integer', minimum: 1 },
    ...modelOptionalProperties,
  },
  required: ['id', 'provider', 'display_name', 'context_window'],
  additionalProperties: false,
} as const;

type CustomBody = FromSchema<typeof customBody>;

function customEntry(body: CustomBody): ModelEntry {
  return {
    id: body.id,
    provider: body.provider,
    display_name: body.display_name,
    tier: body.tier ?? 'custom',
    context_window: body.context_window,
    ...(body.max_output_tokens ? { max_output_tokens: body.max_output_tokens } : {}),
    input_cost_per_1m: body.input_cost_per_1m ?? 0,
    output_cost_per_1m: body.output_cost_per_1m ?? 0,
    supports_tools: body.supports_tools ?? false,
    supports_vision: body.supports_vision ?? false,
    supports_streaming: body.supports_streaming ?? true,
    ...(body.aliases?.length ? { aliases: body.aliases } : {}),
    custom: true,
  };
}

export function modelRoutes(app: Routes, store: CatalogStore): void {
  app.get(
    '/api/models',
    { schema: { summary: 'List catalogue models', tags: ['models'], querystring: listQuery, response: { 200: modelListResponse } } },
    async (request, reply) => {
      // The body is JSON encoded once per filter and snapshot (a Buffer is sent as is): the full list stays a map read.
      const cached = store.listJson(request.query) as unknown as FromSchema<typeof modelListResponse>;
      return reply.type('application/json; charset=utf-8').send(cached);
    },
  );

  app.get('/api/models/aliases', { schema: { summary: 'List model aliases', tags: ['models'], response: { 200: aliasListResponse } } }, async () => {
    const aliases = store.aliases();
    return { aliases, total: Object.keys(aliases).length };
  });

  app.post(
    '/api/models/aliases',
    { schema: { summary: 'Create or change an alias', tags: ['models'], body: aliasBody, response: { 200: aliasResponse, 201: aliasResponse } } },
    async (request, reply) => {
      const { alias, model_id } = request.body;
      const result = await store.setAlias(alias, model_id);
      return reply
        .code(result.created ? 201 : 200)
        .send({ status: result.created ? ('created' as const) : ('updated' as const), alias, model_id: result.model_id });
    },
  );

  const deleteAlias = async (alias: string) => {
    await store.deleteAlias(alias);
    return { status: 'removed', alias } as const;
  };
  app.delete(
    '/api/models/aliases/:alias',
    { schema: { summary: 'Delete an alias', tags: ['models'], params: aliasParams, response: { 200: aliasRemovedResponse } } },
    async (request) => deleteAlias(request.params.alias),
  );
  app.delete(
    '/api/models/aliases/*',
    { schema: { summary: 'Delete an alias containing slashes', tags: ['models'], params: wildParams, response: { 200: aliasRemovedResponse } } },
    async (request) => deleteAlias(request.params['*']),
  );

  app.post(
    '/api/models/custom',
    { schema: { summary: 'Add a custom model', tags: ['models'], body: customBody, response: { 201: modelResponse } } },
    async (request, reply) => {
      return reply.code(201).send(await store.addCustom(customEntry(request.body)));
    },
  );

  const deleteCustom = async (id: string) => {
    await store.deleteCustom(id);
    return { status: 'removed', id } as const;
  };
  app.delete(
    '/api/models/custom/:id',
    { schema: { summary: 'Delete a custom model', tags: ['models'], params: idParams, response: { 200: modelRemovedResponse } } },
    async (request) => deleteCustom(request.params.id),
  );
  app.delete(
    '/api/models/custom/*',
    { schema: { summary: 'Delete a custom model whose id has slashes', tags: ['models'], params: wildParams, response: { 200: modelRemovedResponse } } },
    async (request) => deleteCustom(request.params['*']),
  );

  const getModel = (id: string) => {
    const model = store.model(id);
    if (!model) throw notFound(`model '${id}' not found`);
    return model;
  };
  app.get(
    '/api/models/:id',
    { schema: { summary: 'One model by id or alias', tags: ['models'], params: idParams, response: { 200: modelResponse } } },
    async (request) => getModel(request.params.id),
  );
  app.get(
    '/api/models/*',
    { schema: { summary: 'One model whose id has slashes', tags: ['models'], params: wildParams, response: { 200: modelResponse } } },
    async (request) => getModel(request.params['*']),
  );
}

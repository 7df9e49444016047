import { notFound, type Routes } from '@talon/module-sdk';
import type { Slugs } from '../services/slugs.ts';

const record = {
  type: 'object',
  properties: { slug: { type: 'string' }, title: { type: 'string' }, created_at: { type: 'string', format: 'date-time' } },
  required: ['slug', 'title', 'created_at'],
  additionalProperties: false,
} as const;

const text = { type: 'string', minLength: 1, maxLength: 500 } as const;

const previewSchema = {
  summary: 'The slug of a text, without reserving it',
  tags: ['slug'],
  querystring: { type: 'object', properties: { text }, required: ['text'], additionalProperties: false },
  // Fields not listed in a response schema are dropped from the answer.
  response: { 200: { type: 'object', properties: { slug: { type: 'string' } }, required: ['slug'] } },
} as const;

const reserveSchema = {
  summary: 'Reserves a unique slug for a title',
  tags: ['slug'],
  body: { type: 'object', properties: { title: text }, required: ['title'], additionalProperties: false },
  response: { 201: record },
} as const;

const findSchema = {
  summary: 'A reserved slug',
  tags: ['slug'],
  params: { type: 'object', properties: { slug: { type: 'string', maxLength: 200 } }, required: ['slug'] },
  response: { 200: record },
} as const;

export function slugRoutes(app: Routes, slugs: Slugs): void {
  app.get('/api/slug', { schema: previewSchema }, async (request) => ({ slug: slugs.make(request.query.text) }));

  app.post('/api/slugs', { schema: reserveSchema }, async (request, reply) => reply.code(201).send(await slugs.reserve(request.body.title)));

  app.get('/api/slugs/:slug', { schema: findSchema }, async (request) => {
    const found = await slugs.find(request.params.slug);
    if (!found) throw notFound(`no slug '${request.params.slug}' is reserved`);
    return found;
  });
}

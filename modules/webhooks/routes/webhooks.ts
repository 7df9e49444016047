import { readPage, requireUuid, type Routes } from '@talon/module-sdk';
import type { Hooks } from '../services/hooks.ts';
import type { HookStore } from '../services/store.ts';
import { deliveriesQuery, eventHookBody, eventHookPatch, idParams, outboundBody, outboundPatch } from './schemas.ts';

const tags = ['webhooks'];

export function eventHookRoutes(app: Routes, hooks: Hooks, store: HookStore): void {
  app.get('/api/webhooks/events', { schema: { summary: 'Event webhook subscriptions', tags } }, async () => {
    const webhooks = await Promise.all((await store.list('event')).map((r) => hooks.view(r)));
    return { webhooks, total: webhooks.length };
  });
  app.post('/api/webhooks/events', { schema: { summary: 'Subscribes a URL to one event type', tags, body: eventHookBody } }, async (request, reply) => {
    const { event_type, ...rest } = request.body;
    const row = await hooks.create('event', { ...rest, events: [event_type] });
    return reply.code(201).send(await hooks.view(row));
  });
  app.put(
    '/api/webhooks/events/:id',
    { schema: { summary: 'Changes an event webhook (omitted fields stay)', tags, params: idParams, body: eventHookPatch } },
    async (request) => {
      const { event_type, ...rest } = request.body;
      const row = await hooks.update(requireUuid(request.params.id, 'event webhook id'), 'event', { ...rest, ...(event_type ? { events: [event_type] } : {}) });
      return await hooks.view(row);
    },
  );
  app.delete('/api/webhooks/events/:id', { schema: { summary: 'Removes an event webhook', tags, params: idParams } }, async (request, reply) => {
    await hooks.delete(requireUuid(request.params.id, 'event webhook id'), 'event');
    return reply.code(204).send();
  });
}

export function outboundRoutes(app: Routes, hooks: Hooks, store: HookStore): void {
  const id = (raw: string) => requireUuid(raw, 'webhook id');
  app.get('/api/webhooks', { schema: { summary: 'Outbound webhooks', tags } }, async () => {
    const webhooks = await Promise.all((await store.list('outbound')).map((r) => hooks.view(r)));
    return { webhooks, total: webhooks.length };
  });
  app.post('/api/webhooks', { schema: { summary: 'Creates an outbound webhook', tags, body: outboundBody } }, async (request, reply) => {
    return reply.code(201).send(await hooks.view(await hooks.create('outbound', request.body)));
  });
  app.get('/api/webhooks/:id', { schema: { summary: 'One outbound webhook', tags, params: idParams } }, async (request) =>
    hooks.view(await hooks.get(id(request.params.id), 'outbound')),
  );
  app.put(
    '/api/webhooks/:id',
    { schema: { summary: 'Changes an outbound webhook (omitted fields stay; enabled = true re-enables it)', tags, params: idParams, body: outboundPatch } },
    async (request) => hooks.view(await hooks.update(id(request.params.id), 'outbound', request.body)),
  );
  app.delete('/api/webhooks/:id', { schema: { summary: 'Removes an outbound webhook and its journal', tags, params: idParams } }, async (request, reply) => {
    await hooks.delete(id(request.params.id), 'outbound');
    return reply.code(204).send();
  });
  app.post(
    '/api/webhooks/:id/test',
    { schema: { summary: 'Sends a signed test payload and returns what the target answered', tags, params: idParams } },
    async (request) => hooks.test(id(request.params.id)),
  );
  app.get(
    '/api/webhooks/:id/deliveries',
    { schema: { summary: "A webhook's delivery journal, newest first", tags, params: idParams, querystring: deliveriesQuery } },
    async (request) => {
      const row = await hooks.get(id(request.params.id), 'outbound');
      const page = readPage(request.query, { limit: 50, max: 500 });
      const rows = await store.deliveries(row.id, page.limit, page.offset);
      const deliveries = rows.map(({ body: _b, hook_id: _h, node: _n, lease_until: _l, ...d }) => d);
      return { deliveries, ...page };
    },
  );
}

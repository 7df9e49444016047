/** GET /api/agents/{id}/deliveries: where the replies of the agent's background turns went (newest first). */
import { pageQueryProperties, readPage, type Routes } from '@talon/module-sdk';
import type { DeliveryLog } from '../services/deliveries.ts';

const params = { type: 'object', properties: { id: { type: 'string', description: 'agent id (UUID)' } }, required: ['id'] } as const;
const query = { type: 'object', properties: pageQueryProperties, additionalProperties: false } as const;

export function deliveryRoutes(app: Routes, log: DeliveryLog): void {
  // The agents module's guard answers 400 for a non-UUID and 404 for an unknown agent before this runs.
  app.get(
    '/api/agents/:id/deliveries',
    { schema: { summary: 'Replies of triggered, scheduled and task turns, and failures', params, querystring: query } },
    async (request) => {
      const page = readPage(request.query, { limit: 50, max: 500 });
      return await log.list(request.params.id.toLowerCase(), page.limit, page.offset);
    },
  );
}

/** GET /api/dashboard/views: the views of the running modules that the served build holds (services/views.ts). */
import type { Routes } from '@talon/module-sdk';
import type { ListedView } from '../services/views.ts';

const viewSchema = {
  type: 'object',
  properties: {
    module: { type: 'string' },
    id: { type: 'string' },
    title: { type: 'string' },
    group: { type: 'string' },
    order: { type: 'integer' },
  },
  required: ['module', 'id', 'title', 'group', 'order'],
} as const;

export function viewRoutes(app: Routes, listed: () => ListedView[]): void {
  app.get(
    '/api/dashboard/views',
    {
      schema: {
        summary: "The dashboard's views: those of the running modules, in navigation order",
        tags: ['dashboard'],
        response: { 200: { type: 'object', properties: { views: { type: 'array', items: viewSchema } }, required: ['views'] } },
      },
    },
    async () => ({ views: listed() }),
  );
}

import { cappedLimitProperty, readLimit, type Routes } from '@talon/module-sdk';
import type { Usage } from '../services/usage.ts';
import { usd } from '../services/periods.ts';

const periodQuery = {
  type: 'object',
  properties: { period: { type: 'string', enum: ['hour', 'day', 'week', 'month'], default: 'day' } },
} as const;

const periodSchema = {
  summary: 'Token and cost totals of the current UTC hour, day, ISO week or month (model and media calls), and per purpose of the calls',
  querystring: periodQuery,
} as const;

const mediaSchema = {
  summary: 'Media calls of the current UTC hour, day, ISO week or month per kind, provider, model and unit: units, cost, unpriced calls',
  querystring: periodQuery,
} as const;

/** A year of days at most: a longer window is capped, not refused. */
const DAYS = { limit: 7, max: 366 };

const dailySchema = {
  summary: 'Usage per UTC day, oldest first, days without usage included',
  querystring: {
    type: 'object',
    properties: { days: cappedLimitProperty(DAYS, 'UTC days, today included') },
  },
} as const;

export function usageRoutes(app: Routes, usage: Usage): void {
  app.get('/api/usage', { schema: periodSchema }, async (request) => ({
    ...(await usage.totals(request.query.period)),
    by_purpose: await usage.byPurpose(request.query.period),
  }));
  app.get('/api/usage/summary', { schema: { summary: "Today's usage and the hourly token quota" } }, async () => usage.summary());
  app.get('/api/usage/by-model', { schema: { summary: 'Usage per provider and model, most expensive first' } }, async () => ({
    models: await usage.byModel(),
  }));
  app.get('/api/usage/media', { schema: mediaSchema }, async (request) => {
    const items = await usage.media(request.query.period);
    return {
      period: request.query.period,
      total_cost_usd: usd(items.reduce((sum, m) => sum + m.cost_usd, 0)),
      request_count: items.reduce((sum, m) => sum + m.request_count, 0),
      unpriced_count: items.reduce((sum, m) => sum + m.unpriced_count, 0),
      items,
    };
  });
  app.get('/api/usage/daily', { schema: dailySchema }, async (request) => {
    const days = await usage.daily(readLimit(request.query.days, DAYS));
    return { days, total_cost_usd: days.reduce((sum, d) => sum + d.cost_usd, 0) };
  });
}

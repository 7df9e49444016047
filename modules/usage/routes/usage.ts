import { cappedLimitProperty, readLimit, type Routes } from '@talon/module-sdk';
import type { Usage } from '../services/usage.ts';

const periodSchema = {
  summary: 'Token and cost totals of the current UTC hour, day, ISO week or month, and per purpose of the calls',
  querystring: {
    type: 'object',
    properties: { period: { type: 'string', enum: ['hour', 'day', 'week', 'month'], default: 'day' } },
  },
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
  app.get('/api/usage/daily', { schema: dailySchema }, async (request) => {
    const days = await usage.daily(readLimit(request.query.days, DAYS));
    return { days, total_cost_usd: days.reduce((sum, d) => sum + d.cost_usd, 0) };
  });
}

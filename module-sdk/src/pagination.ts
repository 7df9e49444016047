import { badRequest } from './errors.ts';

export interface Page {
  limit: number;
  offset: number;
}

/** JSON Schema for `?limit=&offset=`, to spread into a route's querystring schema. */
export const pageQueryProperties = {
  limit: { type: 'integer', minimum: 0 },
  offset: { type: 'integer', minimum: 0 },
} as const;

/** Reads limit/offset with a default and a cap; a limit above the cap is clamped, not refused. */
export function readPage(query: { limit?: number; offset?: number }, defaults: { limit: number; max: number }): Page {
  const limit = query.limit === undefined ? defaults.limit : Math.min(Math.max(query.limit, 1), defaults.max);
  const offset = query.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0) throw badRequest('offset must be a non-negative integer');
  return { limit, offset };
}

export function paginate<T>(items: readonly T[], page: Page): { items: T[]; total: number; offset: number; limit: number } {
  return { items: items.slice(page.offset, page.offset + page.limit), total: items.length, offset: page.offset, limit: page.limit };
}

import { badRequest } from './errors.ts';

export interface Page {
  limit: number;
  offset: number;
}

/** A list's page size: the default when none is asked for, and the cap a larger request is clamped to. */
export interface PageSize {
  limit: number;
  max: number;
}

/** JSON Schema for `?limit=&offset=`, to spread into a route's querystring schema. */
export const pageQueryProperties = {
  limit: { type: 'integer', minimum: 0 },
  offset: { type: 'integer', minimum: 0 },
} as const;

/**
 * JSON Schema of a size parameter that is capped, not refused (`readLimit` applies the default and the cap): a non-number
 * or a value below 1 is a 400, a value above `max` is read as `max`. The description tells API readers both numbers.
 */
export function cappedLimitProperty(size: PageSize, what = 'entries to return') {
  return { type: 'integer', minimum: 1, description: `${what}: default ${size.limit}, at most ${size.max} (a larger value is capped)` } as const;
}

/** A requested size with its default and cap applied: a size above the cap is clamped, not refused. */
export function readLimit(limit: number | undefined, size: PageSize): number {
  return limit === undefined ? size.limit : Math.min(Math.max(limit, 1), size.max);
}

/** Reads limit/offset with a default and a cap; a limit above the cap is clamped, not refused. */
export function readPage(query: { limit?: number; offset?: number }, defaults: PageSize): Page {
  const limit = readLimit(query.limit, defaults);
  const offset = query.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0) throw badRequest('offset must be a non-negative integer');
  return { limit, offset };
}

export function paginate<T>(items: readonly T[], page: Page): { items: T[]; total: number; offset: number; limit: number } {
  return { items: items.slice(page.offset, page.offset + page.limit), total: items.length, offset: page.offset, limit: page.limit };
}

/**
 * Default cost of a request when its route sets no `rateCost`, after the
 * reference limiter's table (librefang rate_limiter.rs): reads are cheap,
 * anything that starts an LLM turn or a run is dear.
 */
export function defaultCost(method: string, path: string): number {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return 1;
  if (method === 'POST') {
    if (/\/run(\/|$)/.test(path)) return 100;
    if (path === '/api/agents') return 50;
    if (path.includes('/message')) return 30;
  }
  return 5;
}

const LOCALHOST = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/i;

export type OriginDecision = 'allow' | 'any' | 'deny';

/**
 * Whether a browser origin may call the API.
 * - Localhost origins (any port) always may.
 * - Without an api_key the API is open, so no other site may drive it from a
 *   visitor's browser: cors_origins is ignored, and so is the request's own
 *   Host (a DNS-rebinding page would name itself in both Host and Origin).
 * - With an api_key, the origin the page was served from (same host as the
 *   request) and the exact origins of cors_origins may; "*" allows any.
 */
export function decideOrigin(origin: string, settings: { keyRequired: boolean; cors_origins: readonly string[] }, host: string | undefined): OriginDecision {
  if (LOCALHOST.test(origin)) return 'allow';
  if (!settings.keyRequired) return 'deny';
  if (host && (origin === `http://${host}` || origin === `https://${host}`)) return 'allow';
  if (settings.cors_origins.includes('*')) return 'any';
  const wanted = origin.toLowerCase();
  return settings.cors_origins.some((o) => o.replace(/\/+$/, '').toLowerCase() === wanted) ? 'allow' : 'deny';
}

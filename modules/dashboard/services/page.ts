/**
 * The page says how the browser gets in (meta tags, no script), so the app shows sign-in at once instead of first
 * collecting a 401, and knows whether to offer single sign-on. When this request may use the API already (no key
 * needed, or a valid session cookie) it also names the running modules and their views, so the app needs no probe
 * before it shows a view. It is written per request: api_key can change at run time, and the request may carry a
 * session cookie.
 */
import type { ListedView } from './views.ts';

export interface AuthMode {
  /** open: no key needed; api_key: the key is asked for; session: this request's session cookie is valid. */
  mode: 'open' | 'api_key' | 'session';
  /** The oidc module runs: the sign-in screen asks GET /api/auth/providers for its buttons. */
  oidc: boolean;
  /** The running modules (what GET /api/modules would say), given only when `mode` is not api_key. */
  modules?: string[];
  /** The views of the running modules (what GET /api/dashboard/views would say), likewise. */
  views?: ListedView[];
}

const escapeAttribute = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function withAuthMode(html: string, auth: AuthMode): string {
  let tags = `<meta name="talon-auth" content="${auth.mode}">`;
  if (auth.oidc) tags += '<meta name="talon-oidc" content="on">';
  // Module ids are [a-z0-9-]: nothing in them needs escaping in an attribute.
  if (auth.mode !== 'api_key' && auth.modules) tags += `<meta name="talon-modules" content="${auth.modules.join(' ')}">`;
  // JSON in an attribute (no inline script: the CSP allows none); titles are the modules' words, so escaped.
  if (auth.mode !== 'api_key' && auth.views) tags += `<meta name="talon-views" content="${escapeAttribute(JSON.stringify(auth.views))}">`;
  return html.replace('<head>', `<head>${tags}`);
}

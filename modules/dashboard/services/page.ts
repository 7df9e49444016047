/**
 * The page says how the browser gets in (meta tags, no script), so the app shows sign-in at once instead of first
 * collecting a 401, and knows whether to offer single sign-on. It is written per request: api_key can change at run
 * time, and the request may carry a dashboard session cookie.
 */
export interface AuthMode {
  /** open: no key needed; api_key: the key is asked for; session: this request's session cookie is valid. */
  mode: 'open' | 'api_key' | 'session';
  /** The oidc module runs: the sign-in screen asks GET /api/auth/providers for its buttons. */
  oidc: boolean;
}

export function withAuthMode(html: string, auth: AuthMode): string {
  const tags = `<meta name="talon-auth" content="${auth.mode}">` + (auth.oidc ? '<meta name="talon-oidc" content="on">' : '');
  return html.replace('<head>', `<head>${tags}`);
}

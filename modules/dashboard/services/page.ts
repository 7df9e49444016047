/**
 * The page says whether the API wants a key (a meta tag, no script), so the app shows sign-in at once instead of
 * first collecting a 401. It is read per request: api_key can change at run time.
 */
export function withAuthMode(html: string, keyRequired: boolean): string {
  return html.replace('<head>', `<head><meta name="talon-auth" content="${keyRequired ? 'api_key' : 'open'}">`);
}

/** ChannelErrors as the contract defines them: told apart by name and kind (they cross module bundles). */
import type { ChannelError } from '@talon/channels';

export function channelError(kind: ChannelError['kind'], message: string): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind });
}

export const isAuthError = (err: unknown): boolean => err instanceof Error && err.name === 'ChannelError' && (err as ChannelError).kind === 'auth';

/**
 * A 200 that is not ntfy speaking (a proxy's sign-in page, another service at the URL) as a transient error naming
 * what came back, its content type and first bytes, for last_error; retried with backoff like any failure. The token
 * is cut out should the answer echo it.
 */
export function unexpectedAnswer(what: string, contentType: string | null | undefined, body: string, token: string | undefined): ChannelError {
  let text = body.slice(0, 512);
  if (token) text = text.split(token).join('…');
  text = text
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .trim()
    .slice(0, 80);
  return channelError(
    'transient',
    `${what}: HTTP 200 but not what ntfy answers (content-type ${contentType || 'none'}; it begins ${text ? JSON.stringify(text) : '(empty)'})`,
  );
}

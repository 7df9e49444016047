/** ChannelErrors as the channels module tells them apart: by name and kind (they cross module bundles). */
import type { ChannelError } from '@talon/channels';

export function channelError(kind: ChannelError['kind'], message: string): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind });
}

/** imapflow marks a refused LOGIN/AUTHENTICATE with authenticationFailed; retrying cannot fix it. */
export const isImapAuthError = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { authenticationFailed?: unknown }).authenticationFailed === true;

/** The error as shown in last_error: the server's answer when there is one (never the credentials we sent). */
export function describeMailError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const { responseText, response } = err as { responseText?: unknown; response?: unknown };
  const detail = typeof responseText === 'string' ? responseText : typeof response === 'string' ? response : '';
  if (isImapAuthError(err)) return `IMAP login refused${detail ? `: ${detail}` : ''} (check username and password)`;
  return detail && !err.message.includes(detail) ? `${err.message}: ${detail}` : err.message;
}

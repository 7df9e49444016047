/**
 * Slack's failures as the channels module's ChannelError (told by name and kind, never instanceof: errors cross
 * module bundles). Slack answers API errors as HTTP 200 `{ok: false, error}`; the WebClient throws them as
 * WebAPIPlatformError with `data.error`, a 429 as WebAPIRateLimitedError (`rejectRateLimitedCalls`), a network failure
 * as WebAPIRequestError and another HTTP status as WebAPIHTTPError. Their messages carry the error code, never a token.
 */
import { ErrorCode } from '@slack/web-api';
import type { ChannelError } from '@talon/channels';

/** Codes no retry can fix: the token is wrong, revoked, of the wrong kind, or its workspace is gone. */
const AUTH_ERRORS = new Set([
  'not_authed',
  'invalid_auth',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'not_allowed_token_type',
  'team_disabled',
  'user_removed_from_team',
  'missing_scope',
]);

/** Codes of a message Slack will never take as it is (a retry would only be refused again). */
const PERMANENT_ERRORS = new Set([
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'msg_too_long',
  'no_text',
  'restricted_action',
  'invalid_blocks',
  'too_many_attachments',
]);

export function channelError(kind: ChannelError['kind'], message: string, retryAfterMs?: number): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}

interface SlackLikeError {
  code?: unknown;
  message?: unknown;
  data?: { error?: unknown };
  retryAfter?: unknown;
  statusCode?: unknown;
}

/** Any error a Slack client call threw, classified. */
export function toChannelError(err: unknown): ChannelError {
  if (err instanceof Error && err.name === 'ChannelError') return err as ChannelError;
  const e = (typeof err === 'object' && err !== null ? err : {}) as SlackLikeError;
  const message = typeof e.message === 'string' ? e.message : String(err);
  switch (e.code) {
    case ErrorCode.RateLimitedError: {
      const seconds = typeof e.retryAfter === 'number' ? e.retryAfter : 1;
      return channelError('rate_limited', `slack: ratelimited; retry in ${seconds} s`, Math.ceil(seconds * 1000));
    }
    case ErrorCode.PlatformError: {
      const code = typeof e.data?.error === 'string' ? e.data.error : 'unknown_error';
      const kind = AUTH_ERRORS.has(code) ? 'auth' : PERMANENT_ERRORS.has(code) ? 'permanent' : 'transient';
      return channelError(kind, `slack: ${code}`);
    }
    case ErrorCode.HTTPError: {
      const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
      return channelError(status === 401 || status === 403 ? 'auth' : status >= 500 || status === 0 ? 'transient' : 'permanent', `slack: HTTP ${status}`);
    }
    default:
      return channelError('transient', `slack: ${message}`);
  }
}

export const isAuthError = (err: unknown): boolean => toChannelError(err).kind === 'auth';

/** What last_error shows: the classified message (a Slack error code or a network failure), never a token. */
export const describeError = (err: unknown): string => toChannelError(err).message;

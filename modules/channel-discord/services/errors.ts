/**
 * Discord's failures as the channels module's ChannelError kinds. The contract exports no classes (errors cross module
 * bundles), so a ChannelError is an Error named 'ChannelError' with a kind.
 */
import { DiscordAPIError, HTTPError, RateLimitError } from '@discordjs/rest';
import type { ChannelError } from '@talon/channels';

export function channelError(kind: ChannelError['kind'], message: string, retryAfterMs?: number): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
}

/** A REST failure: 401 stops the channel, other 4xx fail the row, 429 waits, the rest is retried with backoff. */
export function fromDiscord(err: unknown): ChannelError {
  if (err instanceof Error && err.name === 'ChannelError') return err as ChannelError;
  if (err instanceof RateLimitError) {
    // retryAfter is the 429's wait; a limit the library knew before sending has only timeToReset (both in ms).
    return channelError('rate_limited', `Discord rate limit on ${err.route}`, Math.max(err.retryAfter, err.timeToReset, 0));
  }
  if (err instanceof DiscordAPIError) {
    const message = `Discord ${err.status}: ${err.message} (code ${String(err.code)})`;
    if (err.status === 401) return channelError('auth', message);
    return channelError(err.status >= 500 ? 'transient' : 'permanent', message);
  }
  if (err instanceof HTTPError) return channelError(err.status >= 500 ? 'transient' : 'permanent', `Discord ${err.status}: ${err.message}`);
  const message = err instanceof Error ? err.message : String(err);
  // net's SSRF refusal is a configuration problem, not a network hiccup.
  if (err instanceof Error && err.name === 'FetchRefused') return channelError('permanent', message);
  return channelError('transient', message);
}

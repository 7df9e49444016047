/**
 * The REST side of one connection: @discordjs/rest over the channel's net fetch, and @discordjs/core's API on it.
 * retries: 0 — the journal retries a failed send (with the same nonce); a 429 on a send comes back as rate_limited
 * for the journal to wait out, other routes (typing, /gateway/bot) wait inside the library.
 */
import { API } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import type { AdapterContext } from '@talon/channels';
import { netRequest } from './fetch.ts';

export const DEFAULT_API_URL = 'https://discord.com/api';

export interface DiscordRest {
  rest: REST;
  api: API;
  /** The REST root (no trailing slash, no version). */
  apiUrl: string;
  /** Options for one request: its own signal following the connection's. */
  request(): { signal: AbortSignal };
  /** Stops the library's sweeper timers. */
  close(): void;
}

export function apiUrlOf(config: AdapterContext['config']): string {
  return typeof config.api_url === 'string' && config.api_url ? config.api_url.replace(/\/+$/, '') : DEFAULT_API_URL;
}

export function openRest(ctx: AdapterContext, token: string, signal: AbortSignal): DiscordRest {
  const apiUrl = apiUrlOf(ctx.config);
  const rest = new REST({ api: apiUrl, retries: 0, makeRequest: netRequest(ctx), rejectOnRateLimit: (limit) => limit.route.endsWith('/messages') });
  rest.setToken(token);
  return {
    rest,
    api: new API(rest),
    apiUrl,
    // @discordjs/rest adds an abort listener to a request's signal and never removes it: each request gets a signal of
    // its own that follows the connection's (held weakly by it), not the connection's signal itself, which would keep
    // one listener per message sent for the life of the connection.
    request: () => ({ signal: AbortSignal.any([signal]) }),
    close() {
      rest.clearHashSweeper();
      rest.clearHandlerSweeper();
    },
  };
}

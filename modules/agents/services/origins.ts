/**
 * Turn origins and their trust. Only the local user — whoever holds the service's own API: its key, its dashboard —
 * is trusted. Every other origin (a channel, a webhook, a trigger, a schedule, another agent, a peer, an MCP client, a
 * module's own name, or none) is untrusted input, so a module that runs turns for outside messages is safe without
 * having to say so.
 */

/** POST /api/agents/{id}/message (`http`), its streamed form (`http-stream`), the WebSocket chat (`ws`), /v1 (`v1`). */
export const LOCAL_USER_ORIGINS: ReadonlySet<string> = new Set(['http', 'http-stream', 'ws', 'v1']);

/** The origin recorded for a turn whose module named none. */
export const UNNAMED_ORIGIN = 'module';

export const isLocalUser = (origin: string): boolean => LOCAL_USER_ORIGINS.has(origin);

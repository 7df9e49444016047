/** An AdapterContext for the connection alone (no kernel), pointed at the Discord fake. */
import type { AdapterContext } from '@talon/channels';

/** `states` collects what the connection reports (connecting, connected, error), in order. */
export function context(api: string, token: string, controller: AbortController, states: string[] = []): AdapterContext {
  const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
  return {
    channel: 'discord',
    config: { api_url: api },
    secrets: { token },
    emit: async () => ({ duplicate: false }),
    report: (state) => void states.push(state),
    // Loopback only, to the fake: what net's fetch with the api_url's origin exempted does.
    fetch: async (r) => {
      const res = await fetch(r.url, {
        method: r.method,
        headers: r.headers,
        ...(r.body !== undefined ? { body: typeof r.body === 'string' ? r.body : new Uint8Array(r.body) } : {}),
        ...(r.signal ? { signal: r.signal } : {}),
      });
      return {
        status: res.status,
        statusText: res.statusText,
        headers: Object.fromEntries(res.headers),
        body: Buffer.from(await res.arrayBuffer()),
        truncated: false,
        finalUrl: r.url,
      };
    },
    allowOrigins: [],
    log: silent,
    signal: controller.signal,
  };
}

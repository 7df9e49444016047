/** The subscription's `since`, per channel, in the module's own table: what survives a restart of the process. */
import type { Store } from '@talon/module-sdk';

export interface Cursor {
  get(channel: string): Promise<string | undefined>;
  set(channel: string, since: string): Promise<void>;
}

export function storeCursor(store: () => Store): Cursor {
  return {
    async get(channel) {
      return (await store().one<{ since: string }>('SELECT since FROM channel_ntfy_cursor WHERE channel = ?', [channel]))?.since;
    },
    async set(channel, since) {
      await store().run(
        'INSERT INTO channel_ntfy_cursor (channel, since, updated_at) VALUES (?, ?, ?) ON CONFLICT (channel) DO UPDATE SET since = excluded.since, updated_at = excluded.updated_at',
        [channel, since, Date.now()],
      );
    },
  };
}
